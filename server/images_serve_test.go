package server

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/membudget"
	"github.com/vrender/vrender/model"
)

// TestChatCompletionsImageEndToEnd sends an image through /v1/chat/completions
// to engine-sim: the engine gets the rendered features (it checks them as
// vLLM's generate route does) and answers what it saw.
// With an image memory budget the request holds its images' reservation
// until its answer is written, then returns it.
func TestChatCompletionsImageEndToEnd(t *testing.T) {
	dir := multimodalDir(t)
	m, err := model.Load(context.Background(), filepath.Join(dir, "models", "qwen2_5_vl"), model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	budget := membudget.New(1 << 30)
	env := newOpenAIEnvWith(t, "", envOptions{model: m, noServer: true, plain: true, imageBudget: budget})
	data, err := os.ReadFile(filepath.Join(dir, "images", "png_rgb_56x30.png"))
	if err != nil {
		t.Fatal(err)
	}
	body := `{"model":"qwen","max_tokens":200,"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,` +
		base64.StdEncoding.EncodeToString(data) + `"},"uuid":"cat"},{"type":"text","text":"What is it?"}]}]}`
	req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	env.h.ServeHTTP(rec, req)
	// 56x30 on Qwen2.5-VL: scaled up to min_pixels, 84x56, grid 1x4x6.
	if want := "I see 1 image: 84x56 (grid 1x4x6), mm_hash cat."; rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), want) {
		t.Fatalf("status %d: %s\nwant an answer containing %q", rec.Code, rec.Body, want)
	}
	if st := budget.Stats(); st.InUse != 0 || budget.WaitHistogram().Count() != 1 {
		t.Fatalf("after the answer: budget %+v, %d reservations; want one, returned", st, budget.WaitHistogram().Count())
	}
}
