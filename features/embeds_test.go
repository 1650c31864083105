package features

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"testing"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/tensorfile"
)

type embedsFixture struct {
	Parts map[string]struct {
		Embeds tensorSpec `json:"embeds"`
		Grid   tensorSpec `json:"grid"`
	} `json:"parts"`
	Hashes []struct {
		Part      string  `json:"part"`
		ModelID   string  `json:"model_id"`
		UUID      *string `json:"uuid"`
		Kwargs    *string `json:"mm_processor_kwargs"`
		StreamHex *string `json:"stream_hex"`
		SHA256    string  `json:"hash_sha256"`
	} `json:"hashes"`
	Items []struct {
		Part     string `json:"part"`
		Msgpack  string `json:"msgpack_b64"`
		Metadata string `json:"metadata_b64"`
	} `json:"items"`
}

type tensorSpec struct {
	DType string `json:"dtype"`
	Shape []int  `json:"shape"`
	Hex   string `json:"hex"`
}

var testDTypes = map[string]tensorfile.DType{"float32": tensorfile.Float32, "bfloat16": tensorfile.BFloat16,
	"float16": tensorfile.Float16, "int64": tensorfile.Int64, "int32": tensorfile.Int32}

func (s tensorSpec) tensor(t *testing.T) tensorfile.Tensor {
	t.Helper()
	d, ok := testDTypes[s.DType]
	if !ok {
		t.Fatalf("dtype %s", s.DType)
	}
	data, err := hex.DecodeString(s.Hex)
	if err != nil {
		t.Fatal(err)
	}
	return tensorfile.Tensor{DType: d, Shape: s.Shape, Data: data}
}

func (fx *embedsFixture) part(t *testing.T, name string) QwenEmbeds {
	p, ok := fx.Parts[name]
	if !ok {
		t.Fatalf("no part %s", name)
	}
	return QwenEmbeds{Embeds: p.Embeds.tensor(t), GridTHW: p.Grid.tensor(t)}
}

// TestEmbedsHash checks EmbedsHash against the streams gen_embeds.py makes
// with vLLM's own serialize_item tensor branches: sha256 end to end, blake3
// of the Python stream for the default algorithm.
func TestEmbedsHash(t *testing.T) {
	var fx embedsFixture
	readJSON(t, "embeds.json", &fx)
	if len(fx.Hashes) < 5 {
		t.Fatalf("%d cases", len(fx.Hashes))
	}
	for _, c := range fx.Hashes {
		t.Run(c.Part, func(t *testing.T) {
			var kw *wire.Node
			if c.Kwargs != nil {
				var err error
				if kw, err = wire.Parse([]byte(*c.Kwargs)); err != nil {
					t.Fatal(err)
				}
			}
			it := fx.part(t, c.Part)
			checkHash(t, c.SHA256, c.StreamHex, func(h Hasher) (string, error) {
				h.ModelID = c.ModelID
				return h.EmbedsHash(it, c.UUID, kw)
			})
		})
	}
}

// TestQwenEmbedsItems: the kwargs and metadata items of a three-part
// request equal gen_embeds.py's msgpack of vLLM's item layout, and read
// back through DecodeItem.
func TestQwenEmbedsItems(t *testing.T) {
	var fx embedsFixture
	readJSON(t, "embeds.json", &fx)
	var items []QwenEmbeds
	for _, it := range fx.Items {
		items = append(items, fx.part(t, it.Part))
	}
	got, err := QwenEmbedsItems(items)
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range fx.Items {
		want, _ := base64.StdEncoding.DecodeString(it.Msgpack)
		if !bytes.Equal(got[i].Bytes(), want) {
			t.Errorf("item %d (%s) differs", i, it.Part)
		}
		meta, _ := base64.StdEncoding.DecodeString(it.Metadata)
		if m := QwenEmbedsMetadata(items[i]); !bytes.Equal(m, meta) {
			t.Errorf("metadata %d (%s) differs", i, it.Part)
		}
		d, err := DecodeItem(got[i].Bytes())
		if err != nil {
			t.Fatalf("DecodeItem: %v", err)
		}
		if e := d.Elems["image_embeds"]; e.Field.Factory != "flat" || e.Field.KeepOnCPU {
			t.Errorf("image_embeds field %+v", e.Field)
		}
	}
	if _, err := QwenEmbedsItems([]QwenEmbeds{{Embeds: items[0].GridTHW, GridTHW: items[0].GridTHW}}); err == nil {
		t.Error("a 1-D image_embeds accepted")
	}
}

func TestQwenEmbedsFeatures(t *testing.T) {
	var fx embedsFixture
	readJSON(t, "embeds.json", &fx)
	it := fx.part(t, "f32_grid_1x4x6")
	f, err := QwenEmbedsFeatures([]EmbedsItem{{Hash: "h", Placeholder: Placeholder{Offset: 3, Length: 6}, Embeds: it}},
		Options{Kwargs: true})
	if err != nil {
		t.Fatal(err)
	}
	js := string(f.AppendJSON(nil))
	want := `{"mm_hashes":{"image":["h"]},"mm_placeholders":{"image":[{"offset":3,"length":6}]},"kwargs_data":{"image":["`
	if len(js) < len(want) || js[:len(want)] != want {
		t.Fatalf("features %s", js)
	}
	f, err = QwenEmbedsFeatures([]EmbedsItem{{Hash: "h", Placeholder: Placeholder{Offset: 3, Length: 6}, Embeds: it}},
		Options{Kwargs: false})
	if err != nil {
		t.Fatal(err)
	}
	if js := string(f.AppendJSON(nil)); js != `{"mm_hashes":{"image":["h"]},"mm_placeholders":{"image":[{"offset":3,"length":6}]},"kwargs_data":null}` {
		t.Fatalf("features %s", js)
	}
}
