package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/render"
)

// embedsBody is a chat request with one Qwen2-VL image_embeds part: 6 rows
// of 8 and the grid [1, 4, 6] (tensorfile's numpy goldens).
func embedsBody(t *testing.T, modelName, extra string) string {
	return embedsBodyOf(t, modelName, "embeds_6x8.npy", "i64_grid.npy", extra)
}

// embedsBodyOf is embedsBody with other tensors of tensorfile's goldens.
func embedsBodyOf(t *testing.T, modelName, embeds, grid, extra string) string {
	t.Helper()
	b64 := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "tensorfile", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(b)
	}
	return `{"model":"` + modelName + `","max_tokens":200,"messages":[{"role":"user","content":[{"type":"image_embeds","image_embeds":{"image_embeds":"` +
		b64(embeds) + `","image_grid_thw":"` + b64(grid) + `"}` + extra + `},{"type":"text","text":"What is it?"}]}]}`
}

func embedsModel(t *testing.T) *model.Model {
	t.Helper()
	m, err := model.Load(context.Background(), filepath.Join(multimodalDir(t), "models", "qwen2_5_vl"), model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestChatRenderEmbeds: /v1/chat/completions/render refuses image_embeds
// without --enable-mm-embeds with vLLM's body, and with it answers the
// expanded ids and the features of the tensors as sent.
func TestChatRenderEmbeds(t *testing.T) {
	m := embedsModel(t)
	for _, enable := range []bool{false, true} {
		h := imageConfigServer(t, m, func(c *render.ImageConfig) { c.EnableMMEmbeds = enable })
		code, body := postImageRender(t, h, "/v1/chat/completions/render", []byte(embedsBody(t, "m", "")))
		if !enable {
			want := "{\"error\":{\"message\":\"You must set `--enable-mm-embeds` to input `image_embeds`\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}}"
			if code != 400 || string(body) != want {
				t.Fatalf("status %d %s\nwant 400 %s", code, body, want)
			}
			continue
		}
		if code != 200 {
			t.Fatalf("status %d: %s", code, body)
		}
		var ans renderAnswer
		if err := json.Unmarshal(body, &ans); err != nil {
			t.Fatal(err)
		}
		f := decodeFeatures(t, ans.Features)
		mod := f.Modalities[0]
		if mod.Name != "image" || len(mod.Placeholders) != 1 || mod.Placeholders[0].Length != 6 || len(mod.Hashes[0]) != 64 {
			t.Fatalf("features %s", ans.Features)
		}
		pads := 0
		for _, id := range ans.TokenIDs {
			if id == 151655 { // <|image_pad|>
				pads++
			}
		}
		if pads != 6 {
			t.Fatalf("%d pads in %v", pads, ans.TokenIDs)
		}
		it, err := features.DecodeItem(mod.Kwargs[0].Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := it.Elems["image_embeds"].Data.(features.Tensor); !ok || e.DType != "float32" || len(e.Data) != 6*8*4 {
			t.Fatalf("image_embeds %+v", it.Elems["image_embeds"])
		}
	}
}

// TestChatCompletionsEmbedsEndToEnd sends image_embeds through
// /v1/chat/completions to engine-sim, which checks the features as vLLM's
// generate route does and names the grid and hash it got.
func TestChatCompletionsEmbedsEndToEnd(t *testing.T) {
	env := newOpenAIEnvWith(t, "", envOptions{model: embedsModel(t), noServer: true, plain: true, embeds: true})
	code, body := postImageRender(t, env.h, "/v1/chat/completions", []byte(embedsBody(t, "qwen", `,"uuid":"emb"`)))
	if want := "I see 1 image: grid 1x4x6, mm_hash emb."; code != http.StatusOK || !strings.Contains(string(body), want) {
		t.Fatalf("status %d: %s\nwant an answer containing %q", code, body, want)
	}
	// A float16 part with an int32 grid: both as sent, both accepted.
	code, body = postImageRender(t, env.h, "/v1/chat/completions", []byte(embedsBodyOf(t, "qwen", "embeds_16x4_f16.npy", "i32_grid.npy", `,"uuid":"e32"`)))
	if want := "I see 1 image: grid 1x8x8, mm_hash e32."; code != http.StatusOK || !strings.Contains(string(body), want) {
		t.Fatalf("status %d: %s\nwant an answer containing %q", code, body, want)
	}
}
