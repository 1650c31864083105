package server

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/internal/telemetry"
)

// scrape GETs /metrics from h and parses it strictly.
func scrape(t *testing.T, h http.Handler) map[string]*telemetry.Family {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", rec.Code, rec.Body)
	}
	fams, err := telemetry.ParseText(rec.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// scrapeURL is scrape over HTTP.
func scrapeURL(t *testing.T, url string) map[string]*telemetry.Family {
	t.Helper()
	res, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	fams, err := telemetry.ParseText(res.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// do serves one request with the given headers on h.
func do(h http.Handler, method, path, body string, header map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func metric(fams map[string]*telemetry.Family, name string, labels ...string) float64 {
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	v, _ := telemetry.Value(fams, name, want)
	return v
}

func TestMetricsCountRequestsTokensAndStages(t *testing.T) {
	h, _ := testServer(t, nil)
	before := scrape(t, h)
	requests := []struct{ method, path, body string }{
		{"POST", "/tokenize", `{"model":"tiny","prompt":"hello hello"}`},
		{"POST", "/tokenize", `{"model":"tiny","prompt":"hello"}`},
		{"POST", "/detokenize", `{"model":"tiny","tokens":[1,2,3]}`},
		{"POST", "/tokenize", `{"model":"nope","prompt":"x"}`},
		{"GET", "/no/such/route", ""},
	}
	for _, c := range requests {
		do(h, c.method, c.path, c.body, nil)
	}
	fams := scrape(t, h)
	for family, f := range fams {
		if f.Type == "" {
			t.Errorf("%s has no TYPE", family)
		}
	}
	tests := []struct {
		name   string
		labels []string
		delta  float64
	}{
		{"vrender_requests_total", []string{"endpoint", "/tokenize", "code", "200"}, 2},
		{"vrender_requests_total", []string{"endpoint", "/tokenize", "code", "404"}, 1},
		{"vrender_requests_total", []string{"endpoint", "/detokenize", "code", "200"}, 1},
		{"vrender_requests_total", []string{"endpoint", "other", "code", "404"}, 1},
		{"vrender_stage_seconds_count", []string{"stage", "tokenize"}, 2},
		{"vrender_stage_seconds_count", []string{"stage", "detokenize"}, 1},
		{"vrender_generation_tokens_total", []string{"endpoint", "/detokenize"}, 3},
	}
	for _, tc := range tests {
		if got := metric(fams, tc.name, tc.labels...) - metric(before, tc.name, tc.labels...); got != tc.delta {
			t.Errorf("%s%v moved by %v, want %v", tc.name, tc.labels, got, tc.delta)
		}
	}
	if got := metric(fams, "vrender_prompt_tokens_total", "endpoint", "/tokenize"); got < 3 {
		t.Errorf("tokenize prompt tokens %v, want >= 3", got)
	}
	for _, name := range []string{"process_cpu_seconds_total", "vrender_inflight_streams", "vrender_inflight_requests",
		"vrender_derender_cache_hits_total", "vrender_derender_checkpoint_restores_total",
		"vrender_derender_request_cache_hits_total", "vrender_template_cache_hits_total"} {
		if fams[name] == nil || len(fams[name].Samples) == 0 {
			t.Errorf("%s missing", name)
		}
	}
	// The scrape itself is in flight while it writes: 1, never more.
	if got := metric(fams, "vrender_inflight_requests"); got != 1 {
		t.Errorf("vrender_inflight_requests = %v during the scrape, want 1", got)
	}
}

func TestInflightStreamsDuringStream(t *testing.T) {
	env := newOpenAIEnv(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", env.url+"/v1/chat/completions",
		strings.NewReader(`{"model":"qwen","stream":true,"messages":[{"role":"user","content":"think slowly"}]}`))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	br := bufio.NewReader(res.Body)
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	fams := scrapeURL(t, env.url)
	if got := metric(fams, "vrender_inflight_streams"); got != 1 {
		t.Errorf("vrender_inflight_streams = %v during a stream, want 1", got)
	}
	if got := metric(fams, "vrender_engine_healthy", "role", "collocated"); got != 1 {
		t.Errorf("vrender_engine_healthy = %v, want 1 (families %v)", got, fams["vrender_engine_healthy"])
	}
	var rest bytes.Buffer
	if _, err := rest.ReadFrom(br); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rest.String(), "[DONE]") {
		t.Fatalf("stream did not finish: %q", rest.String())
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		fams = scrapeURL(t, env.url)
		if metric(fams, "vrender_inflight_streams") == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("vrender_inflight_streams did not return to 0")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, tc := range []struct {
		name   string
		labels []string
	}{
		{"vrender_requests_total", []string{"endpoint", "/v1/chat/completions", "code", "200"}},
		{"vrender_prompt_tokens_total", []string{"endpoint", "/v1/chat/completions"}},
		{"vrender_generation_tokens_total", []string{"endpoint", "/v1/chat/completions"}},
		{"vrender_stage_seconds_count", []string{"stage", "template"}},
		{"vrender_stage_seconds_count", []string{"stage", "tokenize"}},
		{"vrender_stage_seconds_count", []string{"stage", "detokenize"}},
		{"vrender_stage_seconds_count", []string{"stage", "parse"}},
	} {
		if got := metric(fams, tc.name, tc.labels...); got < 1 {
			t.Errorf("%s%v = %v after a chat stream, want >= 1", tc.name, tc.labels, got)
		}
	}
}

func TestMetricsTokenizerCache(t *testing.T) {
	h, _ := testServer(t, nil)
	before := scrape(t, h)
	body := `{"model":"tiny","prompt":"hello hello hello hello"}`
	// Stored on its second miss, found on the third request.
	for range 3 {
		if code := do(h, "POST", "/tokenize", body, nil).Code; code != 200 {
			t.Fatalf("tokenize: %d", code)
		}
	}
	fams := scrape(t, h)
	for name, want := range map[string]float64{"vrender_tokenizer_cache_misses_total": 2, "vrender_tokenizer_cache_hits_total": 1} {
		if got := metric(fams, name) - metric(before, name); got != want {
			t.Errorf("%s moved by %v, want %v", name, got, want)
		}
	}
	if metric(fams, "vrender_tokenizer_cache_bytes") <= 0 {
		t.Error("vrender_tokenizer_cache_bytes not positive after a miss")
	}
}
