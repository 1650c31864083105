package features

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/internal/wire"
)

func jsonUnmarshalFile(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func twoImages() []Image {
	imgs := synthImages([][3]int64{{1, 2, 2}, {1, 4, 2}}, 1176)
	return []Image{
		{Hash: strings.Repeat("a", 64), Placeholder: Placeholder{Offset: 15, Length: 1}, Processed: imgs[0]},
		{Hash: "uuid-é\"x", Placeholder: Placeholder{Offset: 20, Length: 2}, Processed: imgs[1]},
	}
}

// TestFeaturesJSON compares the writer with model_dump() as Starlette's
// JSONResponse writes it (gen_fixtures.py).
func TestFeaturesJSON(t *testing.T) {
	for _, tc := range []struct {
		file string
		opts Options
	}{
		{"features_two.json", Options{Kwargs: true}},
		{"features_no_kwargs.json", Options{Kwargs: false}},
	} {
		f, err := QwenImageFeatures(twoImages(), 1176, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		got := f.AppendJSON(nil)
		if want := readFile(t, tc.file); !bytes.Equal(got, want) {
			t.Fatalf("%s differs at %d:\n%.300s\nwant\n%.300s", tc.file, testenv.FirstDiff(got, want), got, want)
		}
		// Decode gives the same object back.
		n, err := wire.Parse(got)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Decode(n)
		if err != nil {
			t.Fatal(err)
		}
		if again := d.AppendJSON(nil); !bytes.Equal(again, got) {
			t.Fatalf("round trip differs:\n%.300s", again)
		}
	}
}

func TestFeaturesMetadataMember(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Kwargs: false, Metadata: true}, `"kwargs_data":null,"mm_metadata":null}`},
		{Options{Kwargs: false, Metadata: false}, `"kwargs_data":null}`},
		{Options{Kwargs: true, Metadata: true}, `"]},"mm_metadata":{"image":["`},
	} {
		f, err := QwenImageFeatures(twoImages(), 1176, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		js := f.AppendJSON(nil)
		if !bytes.Contains(js, []byte(tc.want)) {
			t.Fatalf("%+v: no %s in %.200s…", tc.opts, tc.want, js[max(0, len(js)-200):])
		}
		n, _ := wire.Parse(js)
		d, err := Decode(n)
		if err != nil {
			t.Fatal(err)
		}
		if again := d.AppendJSON(nil); !bytes.Equal(again, js) {
			t.Fatalf("%+v: round trip differs", tc.opts)
		}
	}
}

func TestFeaturesMetadataAndEmbed(t *testing.T) {
	f, err := QwenImageFeatures(twoImages(), 1176, Options{Kwargs: true, Metadata: true})
	if err != nil {
		t.Fatal(err)
	}
	f.Modalities[0].Placeholders[1].IsEmbed = []bool{true, false}
	js := f.AppendJSON(nil)
	for _, want := range []string{`{"offset":20,"length":2,"is_embed":[true,false]}`, `,"mm_metadata":{"image":["`} {
		if !bytes.Contains(js, []byte(want)) {
			t.Fatalf("no %s in %s", want, js)
		}
	}
	n, _ := wire.Parse(js)
	d, err := Decode(n)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := DecodeItem(d.Modalities[0].Metadata[1].Bytes())
	if err != nil || len(meta.Keys) != 1 || meta.Keys[0] != "image_grid_thw" {
		t.Fatalf("%v %v", meta.Keys, err)
	}
	if err := d.CheckPrompt(22, false); err != nil {
		t.Fatal(err)
	}
	imgs, err := d.QwenImages(1176, 2)
	if err != nil || len(imgs) != 2 || imgs[1].GridTHW != [3]int64{1, 4, 2} ||
		!bytes.Equal(imgs[1].PixelValues, twoImages()[1].Processed.PixelValues) {
		t.Fatalf("images read back: %d, %v", len(imgs), err)
	}
	// Grids of 4 and 8 rows make 1 and 2 tokens at merge 2: a placeholder
	// of another length is refused.
	d.Modalities[0].Placeholders[1].Length = 3
	d.Modalities[0].Placeholders[1].IsEmbed = nil
	if _, err := d.QwenImages(1176, 2); err == nil {
		t.Fatal("a placeholder of 3 tokens for 2 was accepted")
	}
}

// TestItemsReadByMsgpackLibrary decodes an item with an independent
// msgpack implementation: the layout vLLM's decoder expects.
func TestItemsReadByMsgpackLibrary(t *testing.T) {
	items, err := QwenItems(synthImages([][3]int64{{1, 2, 2}, {1, 4, 2}}, 1176), 1176)
	if err != nil {
		t.Fatal(err)
	}
	dec := msgpack.NewDecoder(bytes.NewReader(items[1].Bytes()))
	msgpack.RegisterExt(3, (*rawView)(nil))
	var v map[string]map[string]any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	field := v["pixel_values"]["field"].([]any)
	kw := field[1].(map[string]any)
	slices := kw["slices"].([]any)
	second := slices[1].([]any)[0].([]any)
	if field[0] != "flat" || kw["keep_on_cpu"] != false || len(slices) != 2 || second[1] != int8(12) || second[2] != nil {
		t.Fatalf("pixel_values field %#v", field)
	}
	data := v["image_grid_thw"]["data"].([]any)
	if data[0] != "int64" || len(*data[2].(*rawView)) != 24 {
		t.Fatalf("image_grid_thw data %#v", data)
	}
}

type rawView []byte

func (r *rawView) UnmarshalMsgpack(b []byte) error { *r = append((*r)[:0], b...); return nil }
func (r *rawView) MarshalMsgpack() ([]byte, error) { return *r, nil }

func TestDecodeRefuses(t *testing.T) {
	gf := mustFeatures(t)
	good := string(gf.AppendJSON(nil))
	for name, js := range map[string]string{
		"not an object":        `[]`,
		"no hashes":            `{"mm_placeholders":{}}`,
		"modalities differ":    `{"mm_hashes":{"image":["a"]},"mm_placeholders":{"audio":[{"offset":0,"length":1}]}}`,
		"lengths differ":       `{"mm_hashes":{"image":["a","b"]},"mm_placeholders":{"image":[{"offset":0,"length":1}]}}`,
		"float offset":         `{"mm_hashes":{"image":["a"]},"mm_placeholders":{"image":[{"offset":1.0,"length":1}]}}`,
		"string length":        `{"mm_hashes":{"image":["a"]},"mm_placeholders":{"image":[{"offset":1,"length":"1"}]}}`,
		"zero length":          `{"mm_hashes":{"image":["a"]},"mm_placeholders":{"image":[{"offset":1,"length":0}]}}`,
		"negative offset":      `{"mm_hashes":{"image":["a"]},"mm_placeholders":{"image":[{"offset":-1,"length":1}]}}`,
		"huge offset":          `{"mm_hashes":{"image":["a"]},"mm_placeholders":{"image":[{"offset":1e3,"length":1}]}}`,
		"is_embed length":      `{"mm_hashes":{"image":["a"]},"mm_placeholders":{"image":[{"offset":1,"length":2,"is_embed":[true]}]}}`,
		"is_embed not bool":    `{"mm_hashes":{"image":["a"]},"mm_placeholders":{"image":[{"offset":1,"length":1,"is_embed":[1]}]}}`,
		"overlap":              `{"mm_hashes":{"image":["a","b"]},"mm_placeholders":{"image":[{"offset":1,"length":5},{"offset":4,"length":1}]}}`,
		"kwargs not base64":    `{"mm_hashes":{"image":["a"]},"mm_placeholders":{"image":[{"offset":1,"length":1}]},"kwargs_data":{"image":["!"]}}`,
		"kwargs short":         `{"mm_hashes":{"image":["a"]},"mm_placeholders":{"image":[{"offset":1,"length":1}]},"kwargs_data":{"image":[]}}`,
		"kwargs modality":      `{"mm_hashes":{"image":["a"]},"mm_placeholders":{"image":[{"offset":1,"length":1}]},"kwargs_data":{"video":[null]}}`,
		"requires_kv no info":  `{"mm_hashes":{"image":["a"]},"mm_placeholders":{"image":[{"offset":1,"length":1}]},"requires_kv":true}`,
		"requires_kv not bool": `{"mm_hashes":{"image":["a"]},"mm_placeholders":{"image":[{"offset":1,"length":1}]},"requires_kv":1}`,
		"hash not string":      `{"mm_hashes":{"image":[1]},"mm_placeholders":{"image":[{"offset":1,"length":1}]}}`,
	} {
		n, err := wire.Parse([]byte(js))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := Decode(n); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	n, _ := wire.Parse([]byte(good))
	f, err := Decode(n)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.CheckPrompt(21, false); err == nil {
		t.Error("a placeholder past the prompt was accepted")
	}
	if err := f.CheckPrompt(22, false); err != nil {
		t.Error(err)
	}
	f.Modalities[0].Kwargs[0] = RawItem(Blob{{0x81, 0xa1, 'x', 0xc0}})
	if err := f.CheckPrompt(22, false); err == nil {
		t.Error("an undecodable item was accepted")
	}
	meta := `{"mm_hashes":{"image":["a"]},"mm_placeholders":{"image":[{"offset":1,"length":1}]},"kwargs_data":null}`
	n, _ = wire.Parse([]byte(meta))
	f, _ = Decode(n)
	if f.CheckPrompt(5, false) == nil || f.CheckPrompt(5, true) != nil {
		t.Error("metadata-only features need ec_transfer_params")
	}
}

func mustFeatures(t *testing.T) Features {
	f, err := QwenImageFeatures(twoImages(), 1176, Options{Kwargs: true})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestDecodeItemRefuses(t *testing.T) {
	items, err := QwenItems(synthImages([][3]int64{{1, 2, 2}}, 1176), 1176)
	if err != nil {
		t.Fatal(err)
	}
	good := [][]byte{items[0].Bytes()}
	if _, err := DecodeItem(good[0]); err != nil {
		t.Fatal(err)
	}
	for i := range len(good[0]) - 1 {
		if _, err := DecodeItem(good[0][:i]); err == nil {
			t.Fatalf("truncated at %d accepted", i)
		}
	}
	for name, b := range map[string][]byte{
		"trailing":        append(append([]byte{}, good[0]...), 0xc0),
		"not a map":       {0x90},
		"huge array":      {0xdd, 0xff, 0xff, 0xff, 0xff},
		"extra elem key":  mp(t, map[string]any{"k": map[string]any{"data": nil, "field": []any{"batched", map[string]any{}}, "x": 1}}),
		"unknown factory": mp(t, map[string]any{"k": map[string]any{"data": nil, "field": []any{"flat_from_sizes", map[string]any{}}}}),
		"flat no slices":  mp(t, map[string]any{"k": map[string]any{"data": nil, "field": []any{"flat", map[string]any{}}}}),
		"bad dtype":       mp(t, map[string]any{"k": map[string]any{"data": []any{"complex", []any{1}, "x"}, "field": []any{"batched", map[string]any{}}}}),
	} {
		if _, err := DecodeItem(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	it, _ := DecodeItem(good[0])
	if _, err := it.QwenImage(1536); err == nil {
		t.Error("a Qwen2.5 item read as Qwen3's")
	}
}

func mp(t *testing.T, v any) []byte {
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func FuzzDecode(f *testing.F) {
	good, _ := QwenImageFeatures(twoImages(), 1176, Options{Kwargs: true, Metadata: true})
	f.Add(good.AppendJSON(nil))
	f.Add([]byte(`{"mm_hashes":{"image":["a"]},"mm_placeholders":{"image":[{"offset":1,"length":2,"is_embed":[true,false]}]},"kwargs_data":null,"requires_kv":true,"kv_handoff":{"version":1,"model_fingerprint":"m","position_state":"sequence"}}`))
	f.Add([]byte(`{"mm_hashes":{},"mm_placeholders":{}}`))
	f.Fuzz(func(t *testing.T, js []byte) {
		n, err := wire.Parse(js)
		if err != nil {
			return
		}
		d, err := Decode(n)
		if err != nil {
			return
		}
		_ = d.CheckPrompt(1<<20, true)
		_, _ = d.QwenImages(1176, 2)
		out := d.AppendJSON(nil)
		if len(out) > d.MaxJSONLen() {
			t.Fatalf("wrote %d bytes, more than MaxJSONLen's %d: %s", len(out), d.MaxJSONLen(), out)
		}
		n2, err := wire.Parse(out)
		if err != nil {
			t.Fatalf("wrote invalid JSON %s: %v", out, err)
		}
		d2, err := Decode(n2)
		if err != nil {
			t.Fatalf("could not read back %s: %v", out, err)
		}
		if again := d2.AppendJSON(nil); !bytes.Equal(again, out) {
			t.Fatalf("not stable:\n%s\n%s", out, again)
		}
	})
}

func FuzzDecodeItem(f *testing.F) {
	items, _ := QwenItems(synthImages([][3]int64{{1, 2, 2}, {1, 2, 4}}, 1176), 1176)
	f.Add(items[1].Bytes())
	f.Add(QwenMetadata(QwenImage{GridTHW: [3]int64{1, 2, 2}}))
	f.Add([]byte{0x81, 0xa1, 'k', 0x82, 0xa4, 'd', 'a', 't', 'a', 0x92, 0x01, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		it, err := DecodeItem(b)
		if err != nil {
			return
		}
		q, err := it.QwenImage(1176)
		if err != nil {
			return
		}
		// A valid Qwen item re-encodes to itself when it is the only
		// image of its call and its fields are in vrender's order.
		again, err := QwenItems([]QwenImage{q}, 1176)
		if err != nil {
			t.Fatalf("decoded image does not encode: %v", err)
		}
		if _, err := DecodeItem(again[0].Bytes()); err != nil {
			t.Fatal(err)
		}
	})
}

// TestAppendJSONGrowsOnce: the features of a request's images are written
// into the buffer AppendJSON grew once, MaxJSONLen long, hashes with
// escapes included.
func TestAppendJSONGrowsOnce(t *testing.T) {
	for _, opts := range []Options{{Kwargs: true}, {Kwargs: true, Metadata: true}, {}, {Metadata: true}} {
		imgs := twoImages()
		imgs[0].Hash = "\x00\x01\"\\\u2028é\xff"
		f, err := QwenImageFeatures(imgs, 1176, opts)
		if err != nil {
			t.Fatal(err)
		}
		f.KVHandoff = &KVHandoff{Version: 1, ModelFingerprint: "\x1f\x1f", PositionState: "sequence"}
		dst := append(make([]byte, 0, 1+f.MaxJSONLen()), '{')
		out := f.AppendJSON(dst)
		if len(out) > 1+f.MaxJSONLen() || &out[0] != &dst[0] {
			t.Fatalf("%+v: %d bytes, MaxJSONLen %d; moved: %v", opts, len(out), f.MaxJSONLen(), &out[0] != &dst[0])
		}
	}
}
