package render

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/vrender/vrender/internal/benchdata"
	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/internal/wire"
)

// benchConversation is the benchmark conversation of n messages with
// words words each, built by internal/benchdata, the generator
// `vrender bench render` uses too: a system prompt, user and assistant
// turns with reasoning, every third turn a tool call and its result.
func benchConversation(n, words int) testRequest {
	q := benchdata.Conversation(benchdata.Size{Messages: n, Words: words})
	return testRequest{Messages: q.Messages, Tools: q.Tools, AddGenerationPrompt: q.AddGenerationPrompt}
}

// reportCPU reports the process CPU time per op since start.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((testenv.CPUTime(b)-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// benchRenderer is the renderer of the benchmarks: qwen3, default flags.
func benchRenderer(b *testing.B) *Renderer {
	r, err := New(testmodel.Load(b, "qwen3"), Config{})
	if err != nil {
		b.Fatal(err)
	}
	return r
}

func BenchmarkRenderChat(b *testing.B) {
	r := benchRenderer(b)
	for _, size := range benchdata.Sizes {
		in := benchConversation(size.Messages, size.Words).input()
		b.Run(size.Name, func(b *testing.B) {
			p, err := r.RenderChat(context.Background(), in)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu := testenv.CPUTime(b)
			for b.Loop() {
				if _, err := r.RenderChat(context.Background(), in); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu)
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
	m := testmodel.Load(b, "qwen3")
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

// sessionTurns is the number of turns of a multi-turn session, as in
// `vrender bench render`: turn t holds the first 2t+1 messages.
const sessionTurns = 41

// taggedConversation is q with tag prefixed to every message's content, so
// that no earlier session's cached segments serve it (bench.ColdConversation).
func taggedConversation(b *testing.B, q testRequest, tag string) testRequest {
	out := q
	out.Messages = make([]json.RawMessage, len(q.Messages))
	for i, raw := range q.Messages {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			b.Fatal(err)
		}
		content, _ := m["content"].(string)
		m["content"] = tag + strconv.Itoa(i) + " " + content
		data, err := json.Marshal(m)
		if err != nil {
			b.Fatal(err)
		}
		out.Messages[i] = data
	}
	return out
}

// BenchmarkRenderChatSession renders one 41-turn session over the 9k
// conversation per op, each turn a request holding every earlier message,
// with the tokenizer's segment cache on (its default): what a multi-turn
// agent's traffic costs the render tier.
func BenchmarkRenderChatSession(b *testing.B) {
	r := benchRenderer(b)
	base := benchConversation(benchdata.Sizes[1].Messages, benchdata.Sizes[1].Words)
	b.ReportAllocs()
	n := 0
	var setup time.Duration // CPU spent with the timer stopped
	cpu := testenv.CPUTime(b)
	for b.Loop() {
		b.StopTimer()
		t0 := testenv.CPUTime(b)
		q := taggedConversation(b, base, fmt.Sprintf("[s%07d] ", n))
		n++
		// The server hands render the messages and tool trees it decoded
		// with the body; decoding is protocol's cost, measured there.
		msgs := typedMessages(q.Messages)
		toolTrees := parseTrees(b, q.Tools)
		setup += testenv.CPUTime(b) - t0
		b.StartTimer()
		for t := range sessionTurns {
			in := q.input()
			k := min(len(q.Messages), 2*t+1)
			in.Messages, in.ToolTrees = msgs[:k], toolTrees
			if _, err := r.RenderChat(context.Background(), in); err != nil {
				b.Fatal(err)
			}
		}
	}
	reportCPU(b, cpu+setup)
}

func parseTrees(b *testing.B, raws []json.RawMessage) []*wire.Node {
	out := make([]*wire.Node, len(raws))
	for i, raw := range raws {
		n, err := wire.Parse(raw)
		if err != nil {
			b.Fatal(err)
		}
		out[i] = n
	}
	return out
}

// BenchmarkRenderTemplate times the template alone on the benchmark
// conversations: the context built once, Render per op.
func BenchmarkRenderTemplate(b *testing.B) {
	r := benchRenderer(b)
	for _, size := range benchdata.Sizes {
		in := benchConversation(size.Messages, size.Words).input()
		tools, err := r.toolsNode(in)
		if err != nil {
			b.Fatal(err)
		}
		tmpl, err := r.chooseTemplate(nil, tools != nil)
		if err != nil {
			b.Fatal(err)
		}
		msgs, err := normalizeMessages(in.Messages, tmpl.format, tmpl.usesDeveloper)
		if err != nil {
			b.Fatal(err)
		}
		kwargs, _, err := r.templateKwargs(in)
		if err != nil {
			b.Fatal(err)
		}
		vars, err := r.contextVars(msgs, tools, nil, kwargs, in.AddGenerationPrompt)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(size.Name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := testenv.CPUTime(b)
			for b.Loop() {
				if _, err := tmpl.tmpl.Render(context.Background(), vars, nil); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu)
		})
	}
}
