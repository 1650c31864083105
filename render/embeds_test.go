package render

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/media"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/tensorfile"
)

// embedsRenderer is the shared Qwen2.5-VL renderer with --enable-mm-embeds
// as given and --limit-mm-per-prompt image=limit (-1: none).
func embedsRenderer(t testing.TB, enable bool, limit int) *Renderer {
	t.Helper()
	r := imageRenderer(t, media.Config{})
	r.images.cfg.EnableMMEmbeds = enable
	r.images.cfg.Limit = limit
	return r
}

// tensorB64 is the base64 of one of tensorfile's golden payloads (numpy's
// np.save, or the torch.save archive testdata/gen.py builds).
func tensorB64(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "tensorfile", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// embedsPartJSON is an image_embeds part of the dict form.
func embedsPartJSON(embeds, grid, extra string) string {
	return `{"type":"image_embeds","image_embeds":{"image_embeds":"` + embeds + `","image_grid_thw":"` + grid + `"}` + extra + `}`
}

func embedsMessage(parts ...string) []protocol.Message {
	return typedMessages([]json.RawMessage{json.RawMessage(`{"role":"user","content":[` + strings.Join(parts, ",") + `,{"type":"text","text":"what is it?"}]}`)})
}

// TestRenderEmbeds: a Qwen2-VL dict part's pad expands to t·h·w // 4 ids;
// the features carry the tensors as sent in vLLM's item layout, and the
// .npy and torch.save forms of the same tensor render identically.
func TestRenderEmbeds(t *testing.T) {
	r := embedsRenderer(t, true, -1)
	grid := tensorB64(t, "i64_grid.npy") // [1, 4, 6]: 6 tokens
	render := func(embeds, extra string) (*ChatPrompt, features.Modality) {
		t.Helper()
		p, err := r.RenderChat(context.Background(), ChatInput{Messages: embedsMessage(embedsPartJSON(embeds, grid, extra)), AddGenerationPrompt: true})
		if err != nil {
			t.Fatal(err)
		}
		return p, renderedFeatures(t, p)
	}
	p, m := render(tensorB64(t, "embeds_6x8.npy"), "")
	pad := r.images.padID
	if got := m.Placeholders; len(got) != 1 || got[0].Length != 6 {
		t.Fatalf("placeholders %+v", got)
	}
	off := m.Placeholders[0].Offset
	for i := range 6 {
		if p.TokenIDs[off+i] != pad {
			t.Fatalf("id %d = %d, want the pad %d", off+i, p.TokenIDs[off+i], pad)
		}
	}
	if p.TokenIDs[off-1] == pad || p.TokenIDs[off+6] == pad {
		t.Fatal("more pads than the grid's tokens")
	}
	npyData, _ := os.ReadFile(filepath.Join("..", "tensorfile", "testdata", "embeds_6x8.npy"))
	embeds, err := tensorfile.Load(npyData, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	it, err := features.DecodeItem(m.Kwargs[0].Bytes())
	if err != nil {
		t.Fatal(err)
	}
	e, ok := it.Elems["image_embeds"].Data.(features.Tensor)
	if !ok || e.DType != "float32" || len(e.Shape) != 2 || e.Shape[0] != 6 || e.Shape[1] != 8 || !bytes.Equal(e.Data, embeds.Data) {
		t.Fatalf("image_embeds %+v", it.Elems["image_embeds"])
	}
	if g := it.Elems["image_grid_thw"]; g.Field.Factory != "batched" || !g.Field.KeepOnCPU {
		t.Fatalf("image_grid_thw field %+v", g.Field)
	}
	gridData, _ := os.ReadFile(filepath.Join("..", "tensorfile", "testdata", "i64_grid.npy"))
	gridT, _ := tensorfile.Load(gridData, 1<<20)
	want, err := r.images.cfg.Hasher.EmbedsHash(features.QwenEmbeds{Embeds: embeds, GridTHW: gridT}, nil, nil)
	if err != nil || m.Hashes[0] != want {
		t.Fatalf("hash %s, want %s (%v)", m.Hashes[0], want, err)
	}

	// torch.save of the same tensor: the same answer.
	p2, m2 := render(tensorB64(t, "pt_embeds_6x8.pt"), "")
	if !bytes.Equal(p2.Features.AppendJSON(nil), p.Features.AppendJSON(nil)) || len(p2.TokenIDs) != len(p.TokenIDs) {
		t.Fatalf("the torch.save form renders differently: %v vs %v", m2.Hashes, m.Hashes)
	}

	// A uuid is the hash; return_mm_kwargs false drops the tensors.
	_, m3 := render(tensorB64(t, "embeds_6x8.npy"), `,"uuid":"emb-1"`)
	if m3.Hashes[0] != "emb-1" {
		t.Fatalf("uuid hash %q", m3.Hashes[0])
	}
	p4, err := r.RenderChat(context.Background(), ChatInput{Messages: embedsMessage(embedsPartJSON(tensorB64(t, "embeds_6x8.npy"), grid, "")),
		AddGenerationPrompt: true, OmitMMKwargs: true})
	if err != nil {
		t.Fatal(err)
	}
	if js := string(p4.Features.AppendJSON(nil)); !strings.HasSuffix(js, `"kwargs_data":null}`) || !slicesEqual(p4.TokenIDs, p.TokenIDs) {
		t.Fatalf("return_mm_kwargs false: %s", js)
	}
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestRenderEmbedsRefused: vLLM's gate, limit, mixing and data-parser
// rules, and the checks vrender adds, each a 400 with its message.
func TestRenderEmbedsRefused(t *testing.T) {
	emb := tensorB64(t, "embeds_6x8.npy")
	grid := tensorB64(t, "i64_grid.npy")
	img := imageDataURL(t, "png_rgb_640x480.png")
	two := embedsPartJSON(emb, grid, "") + "," + embedsPartJSON(emb, grid, "")
	tests := []struct {
		name    string
		enable  bool
		limit   int
		parts   string
		wantErr string
	}{
		{"gate", false, -1, embedsPartJSON(emb, grid, ""), errEmbedsGate},
		{"gate before decoding", false, -1, `{"type":"image_embeds","image_embeds":"!!"}`, errEmbedsGate},
		{"limit", true, 1, two, "At most 1 image(s) may be provided in one prompt."},
		{"mixed", true, -1, embedsPartJSON(emb, grid, "") + `,{"type":"image_url","image_url":{"url":"` + img + `"}}`, errEmbedsMixed},
		{"single tensor", true, -1, `{"type":"image_embeds","image_embeds":"` + emb + `"}`,
			"Qwen2-VL-family models take image_embeds as an object of base64 tensors with the keys 'image_embeds' and 'image_grid_thw', not a single tensor"},
		{"no grid", true, -1, `{"type":"image_embeds","image_embeds":{"image_embeds":"` + emb + `"}}`,
			"The data should contain the fields: {'image_embeds', 'image_grid_thw'}, but only found the following keys: {'image_embeds'}"},
		{"keys differ", true, -1, embedsPartJSON(emb, grid, "") + `,{"type":"image_embeds","image_embeds":{"image_embeds":"` + emb + `","image_grid_thw":"` + grid + `","x":"` + grid + `"}}`,
			errEmbedsSameKeys},
		{"rows", true, -1, embedsPartJSON(emb, tensorB64(t, "i32_grid.npy"), ""),
			"image_embeds [0] has 6 rows, but image_grid_thw [1 8 8] gives 16 placeholder tokens (t·h·w // 4)"},
		{"grid float", true, -1, embedsPartJSON(emb, tensorB64(t, "f64_3.npy"), ""),
			"image_grid_thw [0] must be an integer tensor of shape (3,), got float64 (3,)"},
		{"embeds 1-D", true, -1, embedsPartJSON(grid, grid, ""),
			"image_embeds [0] must be 2D (num_tokens, hidden_size), got 1D tensor with shape (3,)"},
		{"padding", true, -1, embedsPartJSON("abc", grid, ""), "Incorrect padding"},
		{"alphabet", true, -1, embedsPartJSON(`ab\ncd==`, grid, ""), "Non-base64 digit found"},
		{"not a tensor file", true, -1, embedsPartJSON(base64.StdEncoding.EncodeToString([]byte("hello")), grid, ""),
			"image_embeds is neither a .npy file nor a torch.save zip archive"},
		{"value not a string", true, -1, `{"type":"image_embeds","image_embeds":{"image_embeds":5}}`,
			"argument should be a bytes-like object or ASCII string, not 'int'"},
		{"uuid without data", true, -1, `{"type":"image_embeds","image_embeds":null,"uuid":"k"}`,
			"Image embeddings with uuid 'k' have no data and are not cached on this render server"},
		{"pixel_values smuggled", true, -1, `{"type":"image_embeds","image_embeds":{"image_embeds":"` + emb + `","image_grid_thw":"` + grid + `","pixel_values":"` + emb + `"}}`,
			"image_embeds may not carry 'pixel_values': vrender takes image_embeds and image_grid_thw"},
	}
	r := embedsRenderer(t, false, -1)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r.images.cfg.EnableMMEmbeds, r.images.cfg.Limit = tt.enable, tt.limit
			_, err := r.RenderChat(context.Background(), ChatInput{Messages: embedsMessage(tt.parts), AddGenerationPrompt: true})
			if got := imageErrorMessage(err); !strings.HasPrefix(got, tt.wantErr) {
				t.Fatalf("err = %v\nwant %q", err, tt.wantErr)
			}
		})
	}
}

// imageErrorMessage is a 400's message, whether a BadRequestError or an
// ImageError.
func imageErrorMessage(err error) string {
	if ie, ok := err.(*ImageError); ok && ie.Status == 400 {
		return ie.Message
	}
	return badRequestMessage(err)
}

// TestRenderEmbedsLimitZero: with --enable-mm-embeds, an image limit of 0
// lets embeddings through (chat_utils' _validate_add) while images stay
// refused.
func TestRenderEmbedsLimitZero(t *testing.T) {
	r := embedsRenderer(t, true, 0)
	emb, grid := tensorB64(t, "embeds_6x8.npy"), tensorB64(t, "i64_grid.npy")
	if _, err := r.RenderChat(context.Background(), ChatInput{Messages: embedsMessage(embedsPartJSON(emb, grid, ""), embedsPartJSON(emb, grid, ""))}); err != nil {
		t.Fatal(err)
	}
	img := `{"type":"image_url","image_url":{"url":"` + imageDataURL(t, "png_rgb_640x480.png") + `"}}`
	if _, err := r.RenderChat(context.Background(), ChatInput{Messages: embedsMessage(img)}); badRequestMessage(err) != "At most 0 image(s) may be provided in one prompt." {
		t.Fatalf("image with limit 0: %v", err)
	}
}

// TestTextModelRefusesEmbeds: a model without an image processor answers
// get_multimodal_config's refusal, before the gate.
func TestTextModelRefusesEmbeds(t *testing.T) {
	for _, in := range []string{
		`[{"role":"user","content":[{"type":"image_embeds","image_embeds":"x"}]}]`,
		`[{"role":"user","content":[{"image_embeds":{"image_embeds":"x"}}]}]`,
	} {
		_, err := normalizeMessages(testMessages(t, in), FormatOpenAI, false)
		if badRequestMessage(err) != errNotMultimodal {
			t.Errorf("%s: err = %v, want %q", in, err, errNotMultimodal)
		}
	}
}

// FuzzEmbedsParts runs image_embeds parts through parsing and vLLM's
// checks with --enable-mm-embeds: every refusal is a 400 (BadRequestError
// or ImageError), and every accepted item has rows = t·h·w // 4.
func FuzzEmbedsParts(f *testing.F) {
	emb, grid := tensorB64(f, "embeds_6x8.npy"), tensorB64(f, "i64_grid.npy")
	pt := tensorB64(f, "pt_embeds_6x8.pt")
	f.Add(`[` + embedsPartJSON(emb, grid, "") + `]`)
	f.Add(`[` + embedsPartJSON(pt, grid, `,"uuid":"x"`) + `,{"image_embeds":{"image_embeds":"` + emb + `"}}]`)
	f.Add(`[{"type":"image_embeds","image_embeds":"` + emb + `"},{"type":"image_url","image_url":"u"}]`)
	f.Add(`[{"type":"image_embeds","image_embeds":{"image_embeds":"k05VTVBZAQB2AHsnZGVzY3InOiAnPGY0JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDYsIDgpLCB9","image_grid_thw":"` + grid + `"}}]`)
	fetcher, err := media.New(media.Config{MaxMediaBytes: 1 << 16})
	if err != nil {
		f.Fatal(err)
	}
	im := &images{cfg: ImageConfig{Fetcher: fetcher, Limit: -1, EnableMMEmbeds: true}, merge: 2}
	f.Fuzz(func(t *testing.T, content string) {
		raw := json.RawMessage(`{"role":"user","content":` + content + `}`)
		if !json.Valid(raw) {
			return
		}
		mm := &imageParts{im: im}
		_, err := normalizeChat(typedMessages([]json.RawMessage{raw}), FormatOpenAI, false, mm)
		var items []features.QwenEmbeds
		if err == nil {
			items, err = im.checkEmbeds(mm)
		}
		if err != nil {
			if imageErrorMessage(err) == "" || strings.HasPrefix(imageErrorMessage(err), "not a BadRequestError") {
				t.Fatalf("error is %T: %v", err, err)
			}
			return
		}
		for _, it := range items {
			g, err := gridValues(it.GridTHW)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := gridTokens(g, 2); int64(it.Embeds.Shape[0]) != n {
				t.Fatalf("%d rows for grid %v", it.Embeds.Shape[0], g)
			}
		}
	})
}
