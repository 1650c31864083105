package derender

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
)

// benchOutput is a qwen3 output of about n tokens: reasoning, then a hermes
// tool call whose argument is long, then <|im_end|>.
func benchOutput(tb testing.TB, m *model.Model, n int) []int {
	tb.Helper()
	build := func(k int) []int {
		var b strings.Builder
		b.WriteString("<think>\n")
		for i := 0; i < k; i++ {
			fmt.Fprintf(&b, "Step %d: check the file layout. ", i)
		}
		b.WriteString("\n</think>\n\n<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"main.go\", \"content\": \"")
		for i := 0; i < k; i++ {
			fmt.Fprintf(&b, "x%d := f(%d)\\n", i, i)
		}
		b.WriteString("\"}}\n</tool_call>")
		ids := m.Tokenizer.Encode(b.String(), false)
		return append(ids, 151645) // <|im_end|>
	}
	per := len(build(100)) / 100
	return build(n / per)
}

const benchChatRequest = `{"messages":[{"role":"user","content":"write it"}],"tools":[{"type":"function","function":{"name":"write_file","parameters":{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}}}}}]}`

func benchEngine(tb testing.TB, cacheSize int) (*Engine, *protocol.ChatCompletionRequest) {
	tb.Helper()
	m := testmodel.Load(tb, "qwen3")
	e, err := New(m, Config{Parsers: parsers.Config{ReasoningParser: "qwen3", ToolParser: "hermes", EnableAutoToolChoice: true},
		MaxLogprobs: 20, CacheSize: cacheSize})
	if err != nil {
		tb.Fatal(err)
	}
	cr, err := protocol.DecodeChatCompletionRequest([]byte(benchChatRequest))
	if err != nil {
		tb.Fatal(err)
	}
	return e, cr
}

var benchPrompt = []int{151644, 872, 198, 4934, 432, 151645, 198, 151644, 77091, 198}

// echoKind is what a benchmark client echoes of the returned state.
type echoKind int

const (
	echoHistory    echoKind = iota // the state without vrender_checkpoint (vLLM's state model)
	echoCheckpoint                 // only vrender_checkpoint, no prompt after the first call
	echoAll                        // the state as returned
)

// streamOnce derenders ids one token per call as a vLLM client does,
// echoing the state as echo says.
func streamOnce(tb testing.TB, e *Engine, cr *protocol.ChatCompletionRequest, ids []int, echo echoKind) parsers.Accumulator {
	checkpoint := echo == echoCheckpoint
	var acc parsers.Accumulator
	var state *protocol.DerenderStreamState
	ctx := context.Background()
	for i, id := range ids {
		ch := protocol.GenerateChoice{Index: 0, TokenIDs: []int{id}}
		if i == len(ids)-1 {
			ch.FinishReason = new("stop")
		}
		prompt := benchPrompt
		if checkpoint && state != nil {
			prompt = nil
		}
		res, err := e.ChatStream(ctx, &protocol.DerenderChatStreamRequest{
			GenerateChunk: protocol.GenerateResponse{RequestID: "r", Choices: []protocol.GenerateChoice{ch}},
			StreamState:   state, PromptTokenIDs: prompt, ChatRequest: cr,
		}, "m")
		if err != nil {
			tb.Fatal(err)
		}
		state = &res.StreamState
		switch echo {
		case echoCheckpoint:
			state = &protocol.DerenderStreamState{VrenderCheckpoint: res.StreamState.VrenderCheckpoint}
		case echoHistory:
			state.VrenderCheckpoint = ""
		}
		pd := ParserDelta(&res.Chunk.Choices[0].Delta, nil)
		acc.Add(pd)
	}
	return acc
}

func batchOnce(tb testing.TB, e *Engine, cr *protocol.ChatCompletionRequest, ids []int) *protocol.ChatCompletionResponse {
	res, err := e.Chat(context.Background(), &protocol.DerenderChatRequest{
		GenerateResponse: protocol.GenerateResponse{RequestID: "r", Choices: []protocol.GenerateChoice{{Index: 0, TokenIDs: ids, FinishReason: new("stop")}}},
		PromptTokenIDs:   benchPrompt, ChatRequest: cr,
	}, "m")
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

// TestBenchOutputAgrees checks the benchmark's stream reaches the batch
// answer, so the benchmark measures correct work.
func TestBenchOutputAgrees(t *testing.T) {
	for _, cacheSize := range []int{16, 0, -1} {
		checkpoint := cacheSize < 0 // checkpoint path, cache off
		e, cr := benchEngine(t, max(cacheSize, 0))
		ids := benchOutput(t, e.model, 300)
		batch := batchOnce(t, e, cr, ids)
		echo := echoHistory
		if checkpoint {
			echo = echoCheckpoint
		}
		acc := streamOnce(t, e, cr, ids, echo)
		calls := acc.Calls()
		msg := batch.Choices[0].Message
		if len(calls) != 1 || len(msg.ToolCalls) != 1 || calls[0].Arguments != msg.ToolCalls[0].Function.Arguments ||
			msg.Reasoning == nil || acc.Reasoning() != *msg.Reasoning || *batch.Choices[0].FinishReason != "tool_calls" {
			t.Fatalf("cache %d: stream %+v %q\nbatch %+v", cacheSize, calls, acc.Reasoning(), msg)
		}
		if hits, misses := e.CacheStats(); cacheSize > 0 && (misses != 1 || hits != int64(len(ids)-1)) {
			t.Fatalf("cache: %d hits %d misses for %d calls", hits, misses, len(ids))
		}
		if hits, misses := e.CacheStats(); checkpoint && (misses != 1 || hits != 0) {
			t.Fatalf("checkpoint: %d hits %d misses for %d calls", hits, misses, len(ids))
		}
	}
}

// BenchmarkDerender measures one whole output per op: batch, and streamed
// one token per call: echoing the state as returned (stream-echo: the
// checkpoint and the live state it names), echoing the history only
// (stream-cache: found by its digest), the checkpoint only with the cache
// off (every call restores), and the history without a cache (replay,
// O(n²); skipped at 16k where one op takes minutes). `vrender bench
// derender` reports the same in CPU time with ratios.
func BenchmarkDerender(b *testing.B) {
	for _, n := range []int{1 << 10, 4 << 10, 16 << 10} {
		for _, mode := range []string{"batch", "stream-echo", "stream-cache", "stream-checkpoint", "stream-replay"} {
			if mode == "stream-replay" && n > 4<<10 {
				continue
			}
			b.Run(fmt.Sprintf("%s/%dk", mode, n>>10), func(b *testing.B) {
				cache := 64
				if mode == "stream-replay" || mode == "stream-checkpoint" {
					cache = 0
				}
				e, cr := benchEngine(b, cache)
				ids := benchOutput(b, e.model, n)
				b.ResetTimer()
				for b.Loop() {
					switch mode {
					case "batch":
						batchOnce(b, e, cr, ids)
					case "stream-echo":
						streamOnce(b, e, cr, ids, echoAll)
					case "stream-checkpoint":
						streamOnce(b, e, cr, ids, echoCheckpoint)
					default:
						streamOnce(b, e, cr, ids, echoHistory)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(ids)), "ns/token")
			})
		}
	}
}
