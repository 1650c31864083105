package server

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/media"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/render"
)

// multimodalDir is the shared image fixtures (models, corpus, goldens).
func multimodalDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(testenv.SharedDir(t), "multimodal")
	if _, err := os.Stat(filepath.Join(dir, "golden", "render_requests.jsonl")); err != nil {
		testenv.Missing(t, dir, "the multimodal fixtures of ../shared")
	}
	return dir
}

// imageServer serves a model of the multimodal fixtures as "m".
func imageServer(t testing.TB, name string) http.Handler {
	t.Helper()
	m, err := model.Load(context.Background(), filepath.Join(multimodalDir(t), "models", name), model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return realServer(t, m)
}

// imageConfigServer serves m (as "m") with the default image settings
// edit changes.
func imageConfigServer(t *testing.T, m *model.Model, edit func(*render.ImageConfig)) http.Handler {
	t.Helper()
	images, err := render.DefaultImageConfig(m, media.Config{})
	if err != nil {
		t.Fatal(err)
	}
	edit(images)
	r, err := render.New(m, render.Config{Images: images})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Model: m, ServedModelNames: []string{"m"}, Logger: discardLogger(),
		Generator: render.NewGenerator(r, m.MaxModelLen, render.GeneratorConfig{})})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// renderAnswer is the part of a render answer the image tests read.
type renderAnswer struct {
	TokenIDs []int           `json:"token_ids"`
	Features json.RawMessage `json:"features"`
}

// postImageRender posts body to path and returns the status and answer body.
func postImageRender(t *testing.T, h http.Handler, path string, body []byte) (int, []byte) {
	t.Helper()
	req := httptest.NewRequest("POST", path, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// decodeFeatures reads an answer's features member.
func decodeFeatures(t *testing.T, raw json.RawMessage) features.Features {
	t.Helper()
	n, err := wire.Parse(raw)
	if err != nil {
		t.Fatalf("features: %v", err)
	}
	f, err := features.Decode(n)
	if err != nil {
		t.Fatalf("features.Decode: %v\n%s", err, raw)
	}
	return f
}

type renderGolden struct {
	Name           string          `json:"name"`
	Model          string          `json:"model"`
	Endpoint       string          `json:"endpoint"`
	Request        json.RawMessage `json:"request"`
	Images         []string        `json:"images"`
	GridTHW        [][3]int64      `json:"image_grid_thw"`
	ExpectedIDs    []int           `json:"expected_token_ids"`
	MMPlaceholders struct {
		Image []struct{ Offset, Length int } `json:"image"`
	} `json:"mm_placeholders"`
}

func readJSONL[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<28)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// fastBF16 maps model and image file to the bf16 sha256 of HF's fast
// (torchvision) processor, vLLM's default.
func fastBF16(t *testing.T, dir string) map[[2]string]string {
	type line struct {
		Model string `json:"model"`
		File  string `json:"file"`
		Fast  *struct {
			SHA string `json:"sha256_bf16le"`
		} `json:"fast"`
	}
	out := map[[2]string]string{}
	for _, l := range readJSONL[line](t, filepath.Join(dir, "golden", "hf_processors.jsonl")) {
		if l.Fast != nil {
			out[[2]string{l.Model, l.File}] = l.Fast.SHA
		}
	}
	return out
}

// withModel sets the request's model to the served name "m".
func withModel(t *testing.T, req json.RawMessage, extra map[string]any) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(req, &m); err != nil {
		t.Fatal(err)
	}
	m["model"] = "m"
	for k, v := range extra {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestChatRenderImageGoldens renders every case of render_requests.jsonl
// (chat, Anthropic Messages and Responses render routes): ids,
// placeholders and grids exact, and pixel_values equal to HF's fast
// processor bit for bit.
func TestChatRenderImageGoldens(t *testing.T) {
	dir := multimodalDir(t)
	sums := fastBF16(t, dir)
	servers := map[string]http.Handler{}
	for _, g := range readJSONL[renderGolden](t, filepath.Join(dir, "golden", "render_requests.jsonl")) {
		t.Run(g.Model+"/"+g.Name, func(t *testing.T) {
			h := servers[g.Model]
			if h == nil {
				h = imageServer(t, g.Model)
				servers[g.Model] = h
			}
			code, body := postImageRender(t, h, g.Endpoint, withModel(t, g.Request, nil))
			if code != 200 {
				t.Fatalf("status %d: %s", code, body)
			}
			var ans renderAnswer
			if err := json.Unmarshal(body, &ans); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ans.TokenIDs, g.ExpectedIDs) {
				t.Fatalf("token ids differ:\n got %v\nwant %v", ans.TokenIDs, g.ExpectedIDs)
			}
			if len(g.Images) == 0 {
				if string(ans.Features) != "null" {
					t.Fatalf("features = %s, want null", ans.Features)
				}
				return
			}
			f := decodeFeatures(t, ans.Features)
			if len(f.Modalities) != 1 || f.Modalities[0].Name != "image" {
				t.Fatalf("modalities: %+v", f.Modalities)
			}
			mod := f.Modalities[0]
			if len(mod.Placeholders) != len(g.MMPlaceholders.Image) || len(mod.Kwargs) != len(g.Images) {
				t.Fatalf("%d placeholders, %d kwargs; want %d images", len(mod.Placeholders), len(mod.Kwargs), len(g.Images))
			}
			for i, p := range g.MMPlaceholders.Image {
				if got := mod.Placeholders[i]; got.Offset != p.Offset || got.Length != p.Length {
					t.Errorf("placeholder %d = %d+%d, want %d+%d", i, got.Offset, got.Length, p.Offset, p.Length)
				}
				item, err := features.DecodeItem(mod.Kwargs[i].Bytes())
				if err != nil {
					t.Fatalf("item %d: %v", i, err)
				}
				grid := item.Elems["image_grid_thw"].Data.(features.Tensor)
				pv := item.Elems["pixel_values"].Data.(features.Tensor)
				var gotGrid [3]int64
				for j := range gotGrid {
					gotGrid[j] = int64(uint64(grid.Data[8*j]) | uint64(grid.Data[8*j+1])<<8 | uint64(grid.Data[8*j+2])<<16 | uint64(grid.Data[8*j+3])<<24)
				}
				if gotGrid != g.GridTHW[i] {
					t.Errorf("image %d grid %v, want %v", i, gotGrid, g.GridTHW[i])
				}
				sum := sha256.Sum256(pv.Data)
				want, ok := sums[[2]string{g.Model, g.Images[i]}]
				if !ok {
					t.Fatalf("no hf_processors line for %s %s", g.Model, g.Images[i])
				}
				if pv.DType != "bfloat16" || hex.EncodeToString(sum[:]) != want {
					t.Errorf("image %d (%s): pixel_values %s sha256 %x, want bfloat16 %s", i, g.Images[i], pv.DType, sum, want)
				}
			}
		})
	}
}

// TestChatRenderImageFastPath renders every image of the corpus on both
// models with and without return_mm_kwargs: the header-only answer (no
// pixel decode) must give the full path's ids, placeholders and hashes.
func TestChatRenderImageFastPath(t *testing.T) {
	dir := multimodalDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "images", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"qwen2_5_vl", "qwen3_vl"} {
		h := imageServer(t, name)
		for _, file := range files {
			base := filepath.Base(file)
			if strings.HasSuffix(base, ".py") || strings.HasPrefix(base, "invalid_") {
				continue
			}
			t.Run(name+"/"+base, func(t *testing.T) {
				data, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				req := imageRequest("data:image/png;base64,"+base64.StdEncoding.EncodeToString(data), "")
				fullCode, full := postImageRender(t, h, "/v1/chat/completions/render", req)
				fastCode, fast := postImageRender(t, h, "/v1/chat/completions/render",
					withModel(t, req, map[string]any{"return_mm_kwargs": false}))
				if fullCode != fastCode {
					t.Fatalf("full %d %s, fast %d %s", fullCode, full, fastCode, fast)
				}
				if fullCode != 200 {
					// The corpus's 214:1 image is refused by both, alike.
					if string(full) != string(fast) {
						t.Fatalf("errors differ:\nfull %s\nfast %s", full, fast)
					}
					return
				}
				var a, b renderAnswer
				if err := json.Unmarshal(full, &a); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(fast, &b); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(a.TokenIDs, b.TokenIDs) {
					t.Fatalf("token ids differ")
				}
				fa, fb := decodeFeatures(t, a.Features), decodeFeatures(t, b.Features)
				ma, mb := fa.Modalities[0], fb.Modalities[0]
				if !reflect.DeepEqual(ma.Hashes, mb.Hashes) || !reflect.DeepEqual(ma.Placeholders, mb.Placeholders) {
					t.Fatalf("full %+v %+v, fast %+v %+v", ma.Hashes, ma.Placeholders, mb.Hashes, mb.Placeholders)
				}
				if len(ma.Kwargs) != 1 || ma.Kwargs[0].IsNull() || mb.Kwargs != nil || fb.KwargsData {
					t.Fatalf("kwargs: full %d items, fast %v (%d items)", len(ma.Kwargs), fb.KwargsData, len(mb.Kwargs))
				}
			})
		}
	}
}

// imageRequest is a one-image chat render request; extra is more content
// parts' JSON.
func imageRequest(url, extra string) []byte {
	return []byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":` +
		quoteJSON(url) + `}}` + extra + `,{"type":"text","text":"What is it?"}]}]}`)
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestChatRenderImageErrors covers the refusals: bad images with vLLM's
// decode message, the per-prompt limit, a fetch the SSRF guard stops and a
// text-only model.
func TestChatRenderImageErrors(t *testing.T) {
	dir := multimodalDir(t)
	h := imageServer(t, "qwen2_5_vl")
	image := func(name string) string {
		data, err := os.ReadFile(filepath.Join(dir, "images", name))
		if err != nil {
			t.Fatal(err)
		}
		return "data:image/png;base64," + base64.StdEncoding.EncodeToString(data)
	}
	// The server refuses loopback: the guard stops it before connecting.
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the SSRF guard let a fetch of a loopback address through")
	}))
	defer upstream.Close()
	cases := []struct {
		name       string
		body       []byte
		wantStatus int
		wantMsg    string
	}{
		{"random bytes", imageRequest(image("invalid_random.png"), ""), 400,
			"Failed to load image: cannot identify image file <_io.BytesIO object>"},
		{"empty", imageRequest(image("invalid_empty.png"), ""), 400,
			"Failed to load image: cannot identify image file <_io.BytesIO object>"},
		{"truncated", imageRequest(image("invalid_truncated.jpg"), ""), 400,
			"Failed to load image: image file is truncated"},
		{"aspect ratio", imageRequest(image("png_rgb_3000x14_ratio214.png"), ""), 400,
			"absolute aspect ratio must be smaller than 200, got 214.28571428571428"},
		{"private address", imageRequest(upstream.URL+"/cat.png", ""), 400,
			"The URL must not lead to a loopback, private or link-local address (allowed only with --allow-private-media-urls)."},
		{"other scheme", imageRequest("ftp://example.com/cat.png", ""), 400,
			"The URL must be either a HTTP, data or file URL."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, body := postImageRender(t, h, "/v1/chat/completions/render", c.body)
			var e struct {
				Error struct {
					Message string `json:"message"`
					Code    int    `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &e); err != nil || code == 200 {
				t.Fatalf("status %d: %s", code, body)
			}
			if code != c.wantStatus || !strings.HasPrefix(e.Error.Message, c.wantMsg) {
				t.Fatalf("status %d %q, want %d %q", code, e.Error.Message, c.wantStatus, c.wantMsg)
			}
		})
	}
}

// TestChatRenderImageLimit is --limit-mm-per-prompt through the route.
func TestChatRenderImageLimit(t *testing.T) {
	dir := multimodalDir(t)
	m, err := model.Load(context.Background(), filepath.Join(dir, "models", "qwen2_5_vl"), model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "images", "png_rgb_28x28.png"))
	if err != nil {
		t.Fatal(err)
	}
	url := "data:image/png;base64," + base64.StdEncoding.EncodeToString(data)
	two := imageRequest(url, `,{"image_url":`+quoteJSON(url)+`}`)
	for _, c := range []struct {
		limit      int
		body       []byte
		wantStatus int
		wantBody   string
	}{
		{1, two, 400, `{"error":{"message":"At most 1 image(s) may be provided in one prompt.","type":"BadRequestError","param":null,"code":400}}`},
		{0, imageRequest(url, ""), 400, `{"error":{"message":"At most 0 image(s) may be provided in one prompt.","type":"BadRequestError","param":null,"code":400}}`},
		{2, two, 200, ""},
	} {
		h := imageConfigServer(t, m, func(c2 *render.ImageConfig) { c2.Limit = c.limit })
		code, body := postImageRender(t, h, "/v1/chat/completions/render", c.body)
		if code != c.wantStatus || (c.wantBody != "" && string(body) != c.wantBody) {
			t.Errorf("limit %d: status %d %s, want %d %s", c.limit, code, body, c.wantStatus, c.wantBody)
		}
	}
}
