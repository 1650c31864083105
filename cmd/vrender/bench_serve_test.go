package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBenchServeArguments(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no model", []string{"serve"}, "--model is required"},
		{"bad dataset", []string{"serve", "--model", "m", "--dataset-name", "sharegpt"}, `--dataset-name "sharegpt"`},
		{"custom without path", []string{"serve", "--model", "m", "--dataset-name", "custom"}, "needs --dataset-path"},
		{"random without tokenizer", []string{"serve", "--model", "m"}, "a tokenizer is required"},
		{"bad goodput", []string{"serve", "--model", "m", "--goodput", "itl:5"}, "must be one of"},
		{"bad endpoint", []string{"serve", "--model", "m", "--endpoint", "/v1/embeddings"}, "/chat/completions or /completions"},
		{"bad percentile metric", []string{"serve", "--model", "m", "--percentile-metrics", "ttft,foo"}, `"foo"`},
		{"bad header", []string{"serve", "--model", "m", "--header", "nope"}, "KEY=VALUE"},
		{"bad extra body", []string{"serve", "--model", "m", "--extra-body", "{"}, "--extra-body"},
		{"stray argument", []string{"serve", "--model", "m", "extra"}, `unexpected argument "extra"`},
		{"backend mismatch", []string{"serve", "--model", "m", "--backend", "openai-chat", "--endpoint", "/v1/completions"}, "needs a chat endpoint"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := runBench(context.Background(), tc.args, &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("runBench(%q) = %v, want error containing %q", tc.args, err, tc.wantErr)
			}
		})
	}
}

// streamThree answers every request with three tokens, usage and [DONE].
func streamThree(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body["model"] != "served" {
		http.Error(w, fmt.Sprintf("bad body %v: %v", body, err), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for i := range 3 {
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"text\":\"t%d\"}]}\n\n", i)
	}
	io.WriteString(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":3,\"total_tokens\":5}}\n\ndata: [DONE]\n\n")
}

func TestBenchServeRun(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(streamThree))
	defer srv.Close()
	dir := t.TempDir()
	data := filepath.Join(dir, "prompts.jsonl")
	if err := os.WriteFile(data, []byte(`{"prompt":"a"}`+"\n"+`{"prompt":"b"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err := runBench(context.Background(), []string{"serve", "--base-url", srv.URL, "--endpoint", "/v1/completions",
		"--model", "org/name", "--served-model-name", "served", "--dataset-name", "custom", "--dataset-path", data,
		"--num-prompts", "6", "--max-concurrency", "2", "--goodput", "ttft:5000", "tpot:5000",
		"--percentile-metrics", "ttft,e2el", "--metric-percentiles", "50,90", "--metrics-url", "none",
		"--save-result", "--result-dir", dir, "--result-filename", "out.json", "--disable-tqdm"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("bench serve: %v\nstderr: %s", err, stderr.String())
	}
	for _, want := range []string{"Successful requests:                     6", "Total generated tokens:                  18", "P90 TTFT (ms):", "Request goodput (req/s):"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, stdout.String())
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "out.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if res["completed"] != 6.0 || res["total_output_tokens"] != 18.0 || res["backend"] != "openai" || res["model_id"] != "org/name" ||
		res["p90_ttft_ms"] == nil || res["p50_e2el_ms"] == nil || res["request_goodput"] == nil || res["max_concurrency"] != 2.0 {
		t.Errorf("result file: %s", raw)
	}
	if _, ok := res["p99_itl_ms"]; ok {
		t.Errorf("result has ITL percentiles though --percentile-metrics left them out")
	}
}
