package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/benchdata"
	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/internal/testmodel"
)

// benchText is mixed English prose with code and numbers, repeated to size.
func benchText(n int) string {
	const para = "The quick brown fox jumps over the lazy dog; meanwhile, func main() { fmt.Println(42 + 7) } " +
		"prints 49. Prices rose 3.5% in 2024, and naïve café owners in Zürich said \"non!\" — 你好，世界。\n"
	return strings.Repeat(para, n/len(para)+1)[:n]
}

// benchServe posts body to path on h b.N times and checks the status once.
func benchServe(b *testing.B, h http.Handler, path string, body []byte) {
	b.Helper()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		req := httptest.NewRequest("POST", path, strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if i == 0 && rec.Code != 200 {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkTokenizeHTTP measures a whole /tokenize request in process
// (routing, middleware, body checks, validation, encode, JSON out) on
// Qwen3's tokenizer.
func BenchmarkTokenizeHTTP(b *testing.B) {
	h := realServer(b, testmodel.Load(b, "qwen3"))
	for _, size := range []struct {
		name  string
		chars int
	}{{"short", 12}, {"1KB", 1 << 10}, {"36KB", 36 << 10}} {
		body, _ := json.Marshal(map[string]any{"prompt": benchText(size.chars), "model": "m"})
		b.Run(size.name, func(b *testing.B) { benchServe(b, h, "/tokenize", body) })
	}
}

// BenchmarkDetokenizeHTTP measures /detokenize of the tokens of 36KB of text.
func BenchmarkDetokenizeHTTP(b *testing.B) {
	m := testmodel.Load(b, "qwen3")
	h := realServer(b, m)
	body, _ := json.Marshal(map[string]any{"tokens": m.Tokenizer.Encode(benchText(36<<10), false)})
	benchServe(b, h, "/detokenize", body)
}

// BenchmarkHTTPOverhead is the layer's own cost: the same request path on a
// tokenizer with a handful of tokens.
func BenchmarkHTTPOverhead(b *testing.B) {
	h, _ := testServer(b, func(c *Config) { c.Logger = discardLogger() })
	benchServe(b, h, "/tokenize", []byte(`{"prompt":"hi hi","model":"tiny"}`))
}

// BenchmarkChatRenderHTTPBench measures /v1/chat/completions/render in
// process on the conversations of `vrender bench render` (1k, and the
// 9k-token one with 80 messages and tools).
func BenchmarkChatRenderHTTPBench(b *testing.B) {
	h := realServer(b, testmodel.Load(b, "qwen3"))
	for _, size := range benchdata.Sizes {
		q := benchdata.Conversation(size)
		body, err := json.Marshal(map[string]any{"model": "m", "messages": q.Messages, "tools": q.Tools,
			"add_generation_prompt": q.AddGenerationPrompt, "tool_choice": "none"})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(size.Name, func(b *testing.B) { benchServe(b, h, "/v1/chat/completions/render", body) })
	}
}

// BenchmarkChatRenderHTTPCold is BenchmarkChatRenderHTTPBench with text no
// earlier request had in every message, as `vrender bench render --http`'s
// cold rows, so the tokenizer's segment cache cannot serve any of it.
func BenchmarkChatRenderHTTPCold(b *testing.B) {
	h := realServer(b, testmodel.Load(b, "qwen3"))
	for _, size := range benchdata.Sizes {
		q := benchdata.Conversation(size)
		b.Run(size.Name, func(b *testing.B) {
			bodies := make([][]byte, b.N)
			for i := range bodies {
				bodies[i] = coldChatBody(b, q, i)
			}
			b.ReportAllocs()
			b.ResetTimer()
			start, gcStart := testenv.CPUTime(b), gcCPU()
			for _, body := range bodies {
				req := httptest.NewRequest("POST", "/v1/chat/completions/render", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
			b.ReportMetric(float64(testenv.CPUTime(b)-start)/float64(b.N), "cpu-ns/op")
			b.ReportMetric((gcCPU()-gcStart)*1e9/float64(b.N), "gc-cpu-ns/op")
		})
	}
}

// coldChatBody is q's render body with a tag unique to i before every
// message's content.
func coldChatBody(b *testing.B, q benchdata.Request, i int) []byte {
	msgs := make([]json.RawMessage, len(q.Messages))
	for k, raw := range q.Messages {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			b.Fatal(err)
		}
		content, _ := m["content"].(string)
		m["content"] = fmt.Sprintf("[%07d] %d %s", i, k, content)
		msgs[k], _ = json.Marshal(m)
	}
	body, err := json.Marshal(map[string]any{"model": "m", "messages": msgs, "tools": q.Tools,
		"add_generation_prompt": q.AddGenerationPrompt, "tool_choice": "none"})
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// gcCPU is the runtime's estimate of the CPU seconds spent in GC so far.
func gcCPU() float64 {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64()
}
