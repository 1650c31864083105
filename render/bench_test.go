package render

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/vrender/vrender/internal/benchdata"
	"github.com/vrender/vrender/internal/testenv"
)

// benchConversation is the benchmark conversation of n messages with
// words words each, built by internal/benchdata, the generator
// `vrender bench render` uses too: a system prompt, user and assistant
// turns with reasoning, every third turn a tool call and its result.
func benchConversation(n, words int) testRequest {
	q := benchdata.Conversation(benchdata.Size{Messages: n, Words: words})
	return testRequest{Messages: q.Messages, Tools: q.Tools, AddGenerationPrompt: q.AddGenerationPrompt}
}

func BenchmarkRenderChat(b *testing.B) {
	m := loadModel(b, "qwen3")
	r, err := New(m, Config{})
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range benchdata.Sizes {
		in := benchConversation(size.Messages, size.Words).input()
		b.Run(size.Name, func(b *testing.B) {
			p, err := r.RenderChat(context.Background(), in)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := r.RenderChat(context.Background(), in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(p.TokenIDs)), "tokens")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}

// BenchmarkRenderChatReference times the reference on the same requests:
// Python Jinja2 with vLLM's message handling (tools/refrender/chat.py), then
// the HF tokenizers binding (tools/reftok/reftok.js), one request per op
// including the pipe round trips.
func BenchmarkRenderChatReference(b *testing.B) {
	root := testenv.RepoRoot(b)
	m := loadModel(b, "qwen3")
	dir := testenv.ModelDir(b, "qwen3")
	py := startLineProc(b, testenv.Python3(b), filepath.Join(root, "tools", "refrender", "chat.py"))
	node := startLineProc(b, testenv.Node(b), filepath.Join(root, "tools", "reftok", "reftok.js"),
		"--node-modules", testenv.RefNodeModules(b))
	for _, size := range benchdata.Sizes {
		q := benchConversation(size.Messages, size.Words)
		body, err := json.Marshal(q)
		if err != nil {
			b.Fatal(err)
		}
		req := map[string]any{
			"template": m.ChatTemplates["default"], "request": json.RawMessage(body),
			"special_tokens": specialTokensOf(m), "content_format": "auto",
		}
		b.Run(size.Name, func(b *testing.B) {
			// Compile the template and load the tokenizer outside the timing.
			var warm refAnswer
			py.call(b, req, &warm)
			var warmIDs struct{}
			node.call(b, map[string]any{"op": "encode", "model": dir, "text": warm.Prompt}, &warmIDs)
			var tokens int
			for b.Loop() {
				var ans refAnswer
				py.call(b, req, &ans)
				if !ans.OK {
					b.Fatalf("reference: %s", ans.Message)
				}
				var enc struct {
					IDs []int `json:"ids"`
				}
				node.call(b, map[string]any{"op": "encode", "model": dir, "text": ans.Prompt, "add_special_tokens": false}, &enc)
				tokens = len(enc.IDs)
			}
			b.ReportMetric(float64(tokens), "tokens")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}
