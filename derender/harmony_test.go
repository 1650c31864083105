package derender

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
)

// gpt-oss output as tiktoken's o200k_harmony encodes it, from openai/harmony
// (ec7606d): src/tests.rs test_streamable_parser (analysis, then final,
// ended by <|return|>) and test_simple_tool_call (a call to lookup_weather
// in content type "code", here ended by <|call|> as the model stops).
var (
	harmonyFinalIDs = []int{200005, 35644, 200008, 1844, 31064, 25, 392, 4827, 382, 220, 17, 659, 220, 17, 16842, 12295, 81645, 13,
		51441, 6052, 13, 200007, 200006, 173781, 200005, 17196, 200008, 17, 659, 220, 17, 314, 220, 19, 13, 200002}
	harmonyCallIDs = []int{200005, 35644, 200008, 1844, 31064, 25, 392, 4827, 382, 290, 11122, 306, 40510, 16842,
		1416, 1309, 316, 1199, 37342, 170154, 4584, 13, 200007, 200006, 173781, 200005, 35644, 316,
		28, 29712, 170154, 3490, 200008, 10848, 7693, 1243, 392, 173844, 18583, 200012}
)

// goldenIDs reads an openai/harmony test-data file of token ids.
func goldenIDs(t *testing.T, file string) []int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "render", "harmony", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, f := range strings.Fields(string(b)) {
		id, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		ids = append(ids, id)
	}
	return ids
}

func gptossEngine(t *testing.T, m *model.Model, cfg parsers.Config, cacheSize int) *Engine {
	t.Helper()
	e, err := New(m, Config{Parsers: cfg, CacheSize: cacheSize})
	if err != nil {
		t.Fatal(err)
	}
	if !e.Harmony() {
		t.Fatal("gptoss engine is not Harmony")
	}
	return e
}

// TestHarmonyDerender: vLLM's HarmonyParser answer for gpt-oss output ids
// through batch derender, the stream_state history path, the signed
// checkpoint path (one token per call) and in-process sessions.
func TestHarmonyDerender(t *testing.T) {
	m := testmodel.Load(t, "gptoss")
	raw, err := os.ReadFile(filepath.Join("..", "render", "harmony", "testdata", "test_streamable_parser.txt"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.TrimRight(string(raw), "\n")
	streamableIDs := m.Tokenizer.Encode(text, false)
	_, rest, _ := strings.Cut(text, "<|message|>")
	streamableReasoning, _, _ := strings.Cut(rest, "<|end|>")
	both := parsers.Config{ReasoningParser: "openai_gptoss", ToolParser: "openai", EnableAutoToolChoice: true}
	toolOnly := parsers.Config{ToolParser: "openai", EnableAutoToolChoice: true}
	withTools := `{"messages":[{"role":"user","content":"weather?"}],"tools":[{"type":"function","function":{"name":"lookup_weather","parameters":{"type":"object","properties":{"location":{"type":"string"}}}}}]}`
	noTools := `{"messages":[{"role":"user","content":"2+2?"}]}`
	reasoning := func(q string) string { return `User asks: "` + q + `"` }
	for _, tc := range []struct {
		name               string
		cfg                parsers.Config
		req                string
		ids                []int
		reasoning, content string
		call, args, finish string
	}{
		{name: "analysis then final", cfg: both, req: withTools, ids: harmonyFinalIDs,
			reasoning: reasoning("What is 2 + 2?") + " Simple arithmetic. Provide answer.", content: "2 + 2 = 4.", finish: "stop"},
		// test-data/test_simple_reasoning_response.txt: the analysis ends
		// with <|return|>, a stop token the parser reads as the message's
		// end; the final message is cut off by the end of output.
		{name: "test_simple_reasoning_response", cfg: both, req: withTools, ids: goldenIDs(t, "test_simple_reasoning_response.txt"),
			reasoning: reasoning("What is 2 + 2?") + " Simple arithmetic. Provide answer.", content: "2 + 2 = 4.", finish: "stop"},
		// test-data/test_simple_tool_call.txt: recipient before the channel,
		// content type "code" (arguments verbatim), cut off.
		{name: "test_simple_tool_call", cfg: both, req: withTools, ids: goldenIDs(t, "test_simple_tool_call.txt"),
			reasoning: reasoning("What is the weather in Tokyo?") + " We need to use lookup_weather tool.",
			call:      "lookup_weather", args: `{"location": "Tokyo"}`, finish: "tool_calls"},
		// test-data/test_streamable_parser.txt (text, encoded): analysis, a
		// call to the builtin browser.search (not a function: ignored) and
		// the browser's own message (not the assistant's: ignored).
		{name: "test_streamable_parser", cfg: both, req: withTools, ids: streamableIDs,
			reasoning: streamableReasoning, finish: "stop"},
		{name: "tool call", cfg: both, req: withTools, ids: harmonyCallIDs,
			reasoning: reasoning("What is the weather in Tokyo?") + " We need to use lookup_weather tool.",
			call:      "lookup_weather", args: `{"location": "Tokyo"}`, finish: "tool_calls"},
		// No tools and no reasoning parser: vLLM's HarmonyParser still reads
		// every token, so the final channel is the content.
		{name: "tool parser only, no tools", cfg: toolOnly, req: noTools, ids: harmonyFinalIDs, content: "2 + 2 = 4.", finish: "stop"},
		{name: "reasoning parser only", cfg: parsers.Config{ReasoningParser: "openai_gptoss"}, req: noTools, ids: harmonyFinalIDs,
			reasoning: reasoning("What is 2 + 2?") + " Simple arithmetic. Provide answer.", content: "2 + 2 = 4.", finish: "stop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cr, err := protocol.DecodeChatCompletionRequest([]byte(tc.req))
			if err != nil {
				t.Fatal(err)
			}
			for _, cache := range []int{0, 8} {
				e := gptossEngine(t, m, tc.cfg, cache)
				msg := batchOnce(t, e, cr, tc.ids).Choices[0]
				check := func(path, reasoning, content string, calls []parsers.ToolCall, finish string) {
					t.Helper()
					if reasoning != tc.reasoning || content != tc.content || finish != tc.finish {
						t.Errorf("%s: reasoning %q content %q finish %q, want %q %q %q", path, reasoning, content, finish,
							tc.reasoning, tc.content, tc.finish)
					}
					if tc.call == "" && len(calls) != 0 || tc.call != "" && (len(calls) != 1 || calls[0].Name != tc.call || calls[0].Arguments != tc.args) {
						t.Errorf("%s: calls %+v, want %s(%s)", path, calls, tc.call, tc.args)
					}
				}
				var calls []parsers.ToolCall
				for _, c := range msg.Message.ToolCalls {
					if !strings.HasPrefix(c.ID, "chatcmpl-tool-") {
						t.Errorf("tool call id %q", c.ID)
					}
					calls = append(calls, parsers.ToolCall{Name: c.Function.Name, Arguments: c.Function.Arguments})
				}
				check("batch", deref(msg.Message.Reasoning), deref(msg.Message.Content), calls, deref(msg.FinishReason))
				for _, checkpoint := range []bool{false, true} {
					reasoning, content, calls, finish := harmonyStream(t, e, cr, tc.ids, checkpoint)
					check("stream", reasoning, content, calls, finish)
				}
			}
		})
	}
}

// harmonyStream derenders ids one token per call, echoing the stream_state
// history or only the signed checkpoint.
func harmonyStream(t *testing.T, e *Engine, cr *protocol.ChatCompletionRequest, ids []int, checkpoint bool) (reasoning, content string, calls []parsers.ToolCall, finish string) {
	t.Helper()
	var acc parsers.Accumulator
	var state *protocol.DerenderStreamState
	prompt := []int{200006, 1428, 200008, 17, 200007, 200006, 173781}
	for i, id := range ids {
		ch := protocol.GenerateChoice{TokenIDs: []int{id}}
		if i == len(ids)-1 {
			ch.FinishReason = new("stop")
		}
		req := &protocol.DerenderChatStreamRequest{
			GenerateChunk: protocol.GenerateResponse{RequestID: "r", Choices: []protocol.GenerateChoice{ch}},
			StreamState:   state, ChatRequest: cr,
		}
		if state == nil || !checkpoint {
			req.PromptTokenIDs = prompt
		}
		res, err := e.ChatStream(context.Background(), req, "m")
		if err != nil {
			t.Fatal(err)
		}
		state = &res.StreamState
		if checkpoint {
			state = &protocol.DerenderStreamState{VrenderCheckpoint: res.StreamState.VrenderCheckpoint}
		} else {
			state.VrenderCheckpoint = ""
		}
		for _, c := range res.Chunk.Choices {
			acc.Add(ParserDelta(&c.Delta, nil))
			if c.FinishReason != nil {
				finish = *c.FinishReason
			}
		}
	}
	return acc.Reasoning(), acc.Content(), acc.Calls(), finish
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// HarmonyParser refuses other parsers on a gpt-oss model (vLLM raises per
// request; vrender at start).
func TestHarmonyParserCheck(t *testing.T) {
	m := testmodel.Load(t, "gptoss")
	for _, cfg := range []parsers.Config{
		{ReasoningParser: "qwen3"},
		{ToolParser: "hermes", EnableAutoToolChoice: true},
	} {
		if _, err := New(m, Config{Parsers: cfg}); err == nil || !strings.Contains(err.Error(), "Harmony requires") {
			t.Errorf("%+v: err %v", cfg, err)
		}
	}
	// Without --enable-auto-tool-choice vLLM never builds the tool parser.
	if _, err := New(m, Config{Parsers: parsers.Config{ToolParser: "hermes", ReasoningParser: "openai_gptoss"}}); err != nil {
		t.Error(err)
	}
}
