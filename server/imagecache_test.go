package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestMetricsImageCache: a re-sent image is a hit, other processor kwargs a
// miss, and the cache's size shows in the gauges.
func TestMetricsImageCache(t *testing.T) {
	h := imageServer(t, "qwen2_5_vl")
	data, err := os.ReadFile(filepath.Join(multimodalDir(t), "images", "png_rgb_640x480.png"))
	if err != nil {
		t.Fatal(err)
	}
	url := "data:image/png;base64," + base64.StdEncoding.EncodeToString(data)
	plain := imageRequest(url, "")
	small := withModel(t, plain, map[string]any{"mm_processor_kwargs": map[string]any{"max_pixels": 50000}})
	before := scrape(t, h)
	var answers [][]byte
	for _, body := range [][]byte{plain, plain, small} {
		code, out := postImageRender(t, h, "/v1/chat/completions/render", body)
		if code != 200 {
			t.Fatalf("render: %d %.300s", code, out)
		}
		answers = append(answers, out)
	}
	var miss, hit renderAnswer
	if json.Unmarshal(answers[0], &miss) != nil || json.Unmarshal(answers[1], &hit) != nil {
		t.Fatal("answers are not JSON")
	}
	if !slices.Equal(miss.TokenIDs, hit.TokenIDs) || !bytes.Equal(miss.Features, hit.Features) {
		t.Error("the hit answered differently from the miss")
	}
	fams := scrape(t, h)
	for name, want := range map[string]float64{"vrender_image_cache_misses_total": 2, "vrender_image_cache_hits_total": 1,
		"vrender_image_cache_evictions_total": 0, "vrender_image_cache_entries": 2} {
		if got := metric(fams, name) - metric(before, name); got != want {
			t.Errorf("%s moved by %v, want %v", name, got, want)
		}
	}
	// The cache holds the images resized: 644x476 RGB, and a smaller one.
	if got := metric(fams, "vrender_image_cache_bytes") - metric(before, "vrender_image_cache_bytes"); got <= 644*476*3 || got > 2*644*476*3 {
		t.Errorf("vrender_image_cache_bytes moved by %v after two processed images", got)
	}
}

// TestChatRenderMediaIOKwargs: a request's media_io_kwargs reach decoding
// (a transparent image on black answers other pixels), and a bad
// rgba_background_color is vLLM's 400.
func TestChatRenderMediaIOKwargs(t *testing.T) {
	h := imageServer(t, "qwen2_5_vl")
	data, err := os.ReadFile(filepath.Join(multimodalDir(t), "images", "png_rgba_320x240.png"))
	if err != nil {
		t.Fatal(err)
	}
	plain := imageRequest("data:image/png;base64,"+base64.StdEncoding.EncodeToString(data), "")
	var answers []renderAnswer
	for _, bg := range []any{nil, []int{0, 0, 0}} {
		body := plain
		if bg != nil {
			body = withModel(t, plain, map[string]any{"media_io_kwargs": map[string]any{"image": map[string]any{"rgba_background_color": bg}}})
		}
		code, out := postImageRender(t, h, "/v1/chat/completions/render", body)
		var a renderAnswer
		if code != 200 || json.Unmarshal(out, &a) != nil {
			t.Fatalf("render: %d %.300s", code, out)
		}
		answers = append(answers, a)
	}
	if bytes.Equal(answers[0].Features, answers[1].Features) {
		t.Error("rgba_background_color did not change the features")
	}
	body := withModel(t, plain, map[string]any{"media_io_kwargs": map[string]any{"image": map[string]any{"rgba_background_color": []any{0, 0, 0.5}}}})
	code, out := postImageRender(t, h, "/v1/chat/completions/render", body)
	want := `{"error":{"message":"rgba_background_color must be a list or tuple of 3 integers in the range [0, 255].","type":"BadRequestError","param":null,"code":400}}`
	if code != 400 || string(bytes.TrimSpace(out)) != want {
		t.Errorf("bad background: %d %s, want 400 %s", code, out, want)
	}
}
