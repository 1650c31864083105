package parsers

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/vrender/vrender/protocol"
)

// fakeVocab knows the qwen3 think tokens.
type fakeVocab map[string]int

func (v fakeVocab) TokenToID(s string) (int, bool) { id, ok := v[s]; return id, ok }

var testVocab = fakeVocab{"<think>": 151667, "</think>": 151668, "<tool_call>": 151657, "</tool_call>": 151658}

const weatherTools = `{"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]}`

func mustRequest(t testing.TB, s string) *Request {
	t.Helper()
	r, err := decodeRequest([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return &r
}

// decodeRequest reads a test's chat request as the server does: decoded
// and validated by protocol (with a user message when the test gives
// none), then the fields parsing reads, as derender takes them.
func decodeRequest(data []byte) (Request, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		return Request{}, err
	}
	if _, ok := members["messages"]; !ok {
		members["messages"] = json.RawMessage(`[{"role":"user","content":"x"}]`)
	}
	body, err := json.Marshal(members)
	if err != nil {
		return Request{}, err
	}
	cr, err := protocol.DecodeChatCompletionRequest(body)
	if err != nil {
		return Request{}, err
	}
	r := Request{Tools: cr.Tools, ToolChoice: cr.ToolChoice, ParallelToolCalls: cr.ParallelToolCalls,
		IncludeReasoning: &cr.IncludeReasoning, SkipSpecialTokens: &cr.SkipSpecialTokens}
	r.ChatTemplateKwargs = cr.ChatTemplateKwargs
	return r, nil
}

// runSplits parses text fed at the given byte cuts, alternating a fresh
// Delta and a reused one so both ways of pushing see every split.
func runSplits(t testing.TB, cfg Config, req *Request, text string, cuts []int) (Result, Accumulator) {
	return runSplitsWith(t, testVocab, cfg, req, text, cuts)
}

// runSplitsWith is runSplits with the vocabulary v.
func runSplitsWith(t testing.TB, v Vocab, cfg Config, req *Request, text string, cuts []int) (Result, Accumulator) {
	p, err := New(cfg, v, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	var acc Accumulator
	var scratch Delta
	prev := 0
	for i, c := range cuts {
		acc.Add(pushAlternating(p, i, text[prev:c], &scratch))
		prev = c
	}
	acc.Add(pushAlternating(p, len(cuts), text[prev:], &scratch))
	acc.Add(finishDelta(p))
	return acc.Result(p, "stop"), acc
}

// pushAlternating is Push into a fresh Delta for even i and into scratch,
// emptied with its tool-call backing kept, for odd i (the accumulator
// copies each delta before the next push, as reusing it needs).
func pushAlternating(p *Parser, i int, text string, scratch *Delta) Delta {
	if i%2 == 1 {
		*scratch = Delta{ToolCalls: scratch.ToolCalls[:0]}
		p.Push(text, scratch)
		return *scratch
	}
	return pushDelta(p, text)
}

func randomCuts(n int, r *rand.Rand) []int {
	var cuts []int
	for i := 1; i < n; i++ {
		if r.IntN(4) == 0 {
			cuts = append(cuts, i)
		}
	}
	return cuts
}

var (
	qwen3Hermes = Config{ReasoningParser: "qwen3", ToolParser: "hermes", EnableAutoToolChoice: true}
	r1Hermes    = Config{ReasoningParser: "deepseek_r1", ToolParser: "hermes", EnableAutoToolChoice: true}
	hermesOnly  = Config{ToolParser: "hermes", EnableAutoToolChoice: true}
)

func call(name, args string) ToolCall { return ToolCall{Name: name, Arguments: args} }

// parserCases follow Dynamo's PARSER_CASES taxonomy.
var parserCases = []struct {
	name string
	cfg  Config
	req  string
	text string
	want Result
}{
	{"plain text/reasoning then answer", qwen3Hermes, weatherTools, "<think>\nhm\n</think>\n\nHi!",
		Result{Content: new("\n\nHi!"), Reasoning: new("\nhm\n"), FinishReason: "stop"}},
	{"plain text/no tools requested", qwen3Hermes, `{}`, "<think>x</think><tool_call>{}</tool_call>",
		Result{Content: new("<tool_call>{}</tool_call>"), Reasoning: new("x"), FinishReason: "stop"}},
	{"single call", hermesOnly, weatherTools, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Paris\"}}\n</tool_call>",
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Paris"}`)}, FinishReason: "tool_calls"}},
	{"single call/arguments before name", hermesOnly, weatherTools, `<tool_call>{"arguments": {"a": [1, 2.50]}, "name": "f"}</tool_call>`,
		Result{ToolCalls: []ToolCall{call("f", `{"a": [1, 2.5]}`)}, FinishReason: "tool_calls"}},
	{"parallel calls", hermesOnly, weatherTools, `<tool_call>{"name": "a", "arguments": {}}</tool_call>` + "\n" + `<tool_call>{"name": "b", "arguments": {"x": 1e-7}}</tool_call>`,
		Result{ToolCalls: []ToolCall{call("a", `{}`), call("b", `{"x": 1e-07}`)}, FinishReason: "tool_calls"}},
	{"parallel calls/parallel_tool_calls false", hermesOnly, `{"parallel_tool_calls":false,"tools":[{"type":"function","function":{"name":"a"}}]}`,
		`<tool_call>{"name": "a", "arguments": {}}</tool_call><tool_call>{"name": "b", "arguments": {}}</tool_call>`,
		Result{ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
	{"call after text", hermesOnly, weatherTools, "Let me see.\n<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>trailing",
		Result{Content: new("Let me see.\n"), ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
	{"call after whitespace", hermesOnly, weatherTools, "\n\n<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>",
		Result{ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
	{"malformed/bare word", hermesOnly, weatherTools, "\n<tool_call>{\"name\": \"a\", \"arguments\": {\"c\": Paris}}</tool_call>",
		Result{Content: new("\n<tool_call>{\"name\": \"a\", \"arguments\": {\"c\": Paris}}</tool_call>"), FinishReason: "stop"}},
	{"malformed/second call breaks all", hermesOnly, weatherTools, `<tool_call>{"name": "a", "arguments": {}}</tool_call><tool_call>[1]</tool_call>`,
		Result{Content: new(`<tool_call>{"name": "a", "arguments": {}}</tool_call><tool_call>[1]</tool_call>`), FinishReason: "stop"}},
	{"malformed/missing arguments", hermesOnly, weatherTools, `<tool_call>{"name": "a"}</tool_call>`,
		Result{Content: new(`<tool_call>{"name": "a"}</tool_call>`), FinishReason: "stop"}},
	{"malformed/end tag inside string", hermesOnly, weatherTools, `<tool_call>{"name": "a", "arguments": {"s": "</tool_call>"}}</tool_call>`,
		Result{Content: new(`<tool_call>{"name": "a", "arguments": {"s": "</tool_call>"}}</tool_call>`), FinishReason: "stop"}},
	{"truncated/in arguments", hermesOnly, weatherTools, `<tool_call>{"name": "a", "arguments": {"s": "x`,
		Result{Content: new(`<tool_call>{"name": "a", "arguments": {"s": "x`), FinishReason: "stop"}},
	{"truncated/unclosed but complete", hermesOnly, weatherTools, `<tool_call>{"name": "a", "arguments": 7}`,
		Result{ToolCalls: []ToolCall{call("a", `7`)}, FinishReason: "tool_calls"}},
	{"truncated/in reasoning", qwen3Hermes, weatherTools, "<think>still", Result{Reasoning: new("still"), FinishReason: "stop"}},
	{"unicode", hermesOnly, weatherTools, `<tool_call>{"name": "s", "arguments": {"q": "東京 🌧️ \u00e9 \ud83d\ude00"}}</tool_call>`,
		Result{ToolCalls: []ToolCall{call("s", `{"q": "東京 🌧️ é 😀"}`)}, FinishReason: "tool_calls"}},
	{"reasoning/tool_call ends qwen3 reasoning", qwen3Hermes, weatherTools, "<think>plan <tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>",
		Result{Reasoning: new("plan "), ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
	{"reasoning/qwen3 drops a second end tag", qwen3Hermes, `{}`, "a</think>b</think>c",
		Result{Reasoning: new("a"), Content: new("bc"), FinishReason: "stop"}},
	{"reasoning/deepseek_r1 keeps a second end tag", r1Hermes, `{}`, "a</think>b</think>c",
		Result{Reasoning: new("a"), Content: new("b</think>c"), FinishReason: "stop"}},
	{"reasoning/deepseek_r1 empty think", r1Hermes, `{}`, "<think></think>", Result{Reasoning: new(""), FinishReason: "stop"}},
	{"reasoning/include_reasoning false", qwen3Hermes, `{"include_reasoning":false}`, "<think>x</think>y",
		Result{Content: new("y"), FinishReason: "stop"}},
	{"reasoning/thinking disabled", qwen3Hermes, `{"chat_template_kwargs":{"enable_thinking":false}}`, "a</think>b",
		Result{Content: new("a</think>b"), FinishReason: "stop"}},
	{"tool_choice/none", hermesOnly, `{"tool_choice":"none","tools":[{"type":"function","function":{"name":"a"}}]}`,
		`<tool_call>{"name": "a", "arguments": {}}</tool_call>`, Result{Content: new(`<tool_call>{"name": "a", "arguments": {}}</tool_call>`), FinishReason: "stop"}},
	{"tool_choice/required", hermesOnly, `{"tool_choice":"required","tools":[{"type":"function","function":{"name":"a"}}]}`,
		`<tool_call>{"name": "a", "arguments": {}}</tool_call>`, Result{Content: new(""), ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
	{"tool_choice/named", hermesOnly, `{"tool_choice":{"type":"function","function":{"name":"a"}},"tools":[{"type":"function","function":{"name":"a"}}]}`,
		`<tool_call>{"name": "a", "arguments": {}}</tool_call>`, Result{Content: new(""), ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "stop"}},
}

func normalise(r Result) Result {
	for i := range r.ToolCalls {
		r.ToolCalls[i].ID, r.ToolCalls[i].Type = "", ""
	}
	if r.ToolCalls == nil {
		r.ToolCalls = []ToolCall{}
	}
	return r
}

func TestParserCases(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range parserCases {
		t.Run(tc.name, func(t *testing.T) {
			checkToolCase(t, r, tc.cfg, mustRequest(t, tc.req), tc.text, tc.want)
		})
	}
}

func TestHugeArguments(t *testing.T) {
	long := strings.Repeat("lorem ipsum \\\"dolor\\\" ", 20000)
	text := `<tool_call>{"name": "w", "arguments": {"text": "` + long + `", "n": 12345678901234567890}}</tool_call>`
	req := mustRequest(t, weatherTools)
	batch, _ := runSplits(t, hermesOnly, req, text, nil)
	if len(batch.ToolCalls) != 1 || batch.ToolCalls[0].Arguments != `{"text": "`+long+`", "n": 12345678901234567890}` {
		t.Fatalf("huge arguments not re-serialised exactly")
	}
	stream, _ := runSplits(t, hermesOnly, req, text, randomCuts(len(text), rand.New(rand.NewPCG(5, 6))))
	if !reflect.DeepEqual(normalise(stream), normalise(batch)) {
		t.Fatal("stream differs from batch")
	}
}

func TestStreamsNameBeforeArguments(t *testing.T) {
	p, err := New(hermesOnly, testVocab, mustRequest(t, weatherTools), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := pushDelta(p, `<tool_call>{"name": "get_weather", "arguments": {"ci`)
	if len(d.ToolCalls) != 1 || d.ToolCalls[0].Name != "get_weather" || d.ToolCalls[0].ID == "" || d.ToolCalls[0].Arguments != `{"ci` {
		t.Fatalf("first delta = %+v", d)
	}
}

func TestUnknownParser(t *testing.T) {
	if _, err := New(Config{ToolParser: "nope"}, testVocab, &Request{}, nil); err == nil {
		t.Fatal("want an error for an unknown tool parser")
	}
	if _, err := New(Config{ReasoningParser: "nope"}, testVocab, &Request{}, nil); err == nil {
		t.Fatal("want an error for an unknown reasoning parser")
	}
}

func dump(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// fuzzPieces are fragments a model output is built from in the fuzz target.
var fuzzPieces = []string{"<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_", "</thi", "\n", " ", "text",
	`{"name": "a", "arguments": {"x": [1, 2.5e3, "é"]}}`, `{"name": `, `"b"`, `, "arguments": `, `{}`, `}`, `"\u00e9\n"`, "東京", "<", ">"}

func FuzzParsers(f *testing.F) {
	f.Add([]byte{0, 2, 9, 3, 1}, uint64(1))
	f.Add([]byte{2, 10, 11, 12, 13, 14, 3}, uint64(2))
	f.Fuzz(func(t *testing.T, recipe []byte, seed uint64) {
		var sb strings.Builder
		for _, b := range recipe {
			sb.WriteString(fuzzPieces[int(b)%len(fuzzPieces)])
		}
		text := sb.String()
		req := mustRequest(t, weatherTools)
		for _, cfg := range []Config{qwen3Hermes, r1Hermes, hermesOnly} {
			batch, _ := runSplits(t, cfg, req, text, nil)
			stream, acc := runSplits(t, cfg, req, text, randomCuts(len(text), rand.New(rand.NewPCG(seed, 9))))
			if !reflect.DeepEqual(normalise(stream), normalise(batch)) {
				t.Fatalf("%+v %q:\nstream %s\n batch %s", cfg, text, dump(stream), dump(batch))
			}
			if len(batch.ToolCalls) > 0 && strings.Contains(acc.Content(), "<tool_call>") {
				t.Fatalf("%+v %q: marker leaked as content %q", cfg, text, acc.Content())
			}
			if cfg.ReasoningParser == "qwen3" && (strings.Contains(acc.Content(), "</think>") || strings.Contains(acc.Reasoning(), "</think>")) {
				t.Fatalf("%q: </think> leaked: %s", text, dump(batch))
			}
		}
	})
}
