package parsers

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

var (
	mistralOnly  = Config{ToolParser: "mistral", EnableAutoToolChoice: true}
	mistralV11   = fakeVocab{"[TOOL_CALLS]": 9, "[ARGS]": 32}
	mistralPreV1 = fakeVocab{"[TOOL_CALLS]": 5}
)

// runMistral parses text fed at cuts with vocab v.
func runMistral(t testing.TB, v Vocab, req *Request, text string, cuts []int) Result {
	r, _ := runSplitsWith(t, v, mistralOnly, req, text, cuts)
	return r
}

func checkMistral(t *testing.T, r *rand.Rand, v Vocab, tc toolCase) {
	t.Helper()
	checkToolCaseWith(t, r, v, mistralOnly, mustRequest(t, tc.req), tc.text, tc.want)
}

// v11 cases: test_extract_tool_calls of vLLM's
// tests/tool_parsers/test_mistral_tool_parser.py (outputs, names, contents;
// the arguments are the raw text, as the parser returns it).
var mistralV11Cases = []toolCase{
	{"plain text", weatherTools, "This is a test", Result{Content: new("This is a test"), FinishReason: "stop"}},
	{"single call", weatherTools, `[TOOL_CALLS]add_this_and_that{"a": 3.5, "b": 4}`,
		Result{ToolCalls: []ToolCall{call("add_this_and_that", `{"a": 3.5, "b": 4}`)}, FinishReason: "tool_calls"}},
	{"single call/weather", weatherTools, `[TOOL_CALLS]get_current_weather{"city": "San Francisco", "state": "CA", "unit": "celsius"}`,
		Result{ToolCalls: []ToolCall{call("get_current_weather", `{"city": "San Francisco", "state": "CA", "unit": "celsius"}`)}, FinishReason: "tool_calls"}},
	{"single call/ARGS token removed", weatherTools, `[TOOL_CALLS]get_weather[ARGS]{"city":"Paris"}`,
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city":"Paris"}`)}, FinishReason: "tool_calls"}},
	{"parallel calls", weatherTools, `[TOOL_CALLS]add{"a": 3.5, "b": 4}[TOOL_CALLS]multiply{"a": 3, "b": 6}`,
		Result{ToolCalls: []ToolCall{call("add", `{"a": 3.5, "b": 4}`), call("multiply", `{"a": 3, "b": 6}`)}, FinishReason: "tool_calls"}},
	{"parallel calls/parallel_tool_calls false", `{"parallel_tool_calls":false,"tools":[{"type":"function","function":{"name":"a"}}]}`,
		`[TOOL_CALLS]a{}[TOOL_CALLS]b{}`, Result{ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
	{"call after text/complex truncated", weatherTools, `hi{hi[TOOL_CALLS]bash{"command": "print(\"hello world!\")\nre.compile(r'{}')`,
		Result{Content: new("hi{hi"), ToolCalls: []ToolCall{call("bash", `{"command": "print(\"hello world!\")\nre.compile(r'{}')`)}, FinishReason: "tool_calls"}},
	{"call after text/wrong json kept", weatherTools, `hi{hi[TOOL_CALLS]bash{"command": "print(\"hello world!\")\nre.compile(r'{}')"}`,
		Result{Content: new("hi{hi"), ToolCalls: []ToolCall{call("bash", `{"command": "print(\"hello world!\")\nre.compile(r'{}')"}`)}, FinishReason: "tool_calls"}},
	{"call after whitespace", weatherTools, " \n[TOOL_CALLS]a{}", Result{ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
	{"without args skipped", weatherTools, "[TOOL_CALLS]toolname_no_args", Result{FinishReason: "stop"}},
	{"unicode", weatherTools, "東京[TOOL_CALLS]s{\"q\": \"é 😀\"} ", Result{Content: new("東京"), ToolCalls: []ToolCall{call("s", `{"q": "é 😀"} `)}, FinishReason: "tool_calls"}},
	{"tool_choice/none", `{"tool_choice":"none","tools":[{"type":"function","function":{"name":"a"}}]}`, `[TOOL_CALLS]a{}`,
		Result{Content: new(`[TOOL_CALLS]a{}`), FinishReason: "stop"}},
}

// pre-v11 cases: test_extract_tool_calls_pre_v11_tokenizer and the regex
// fallback tests of the same file.
var mistralPreV11Cases = []toolCase{
	{"plain text", weatherTools, "This is a test", Result{Content: new("This is a test"), FinishReason: "stop"}},
	{"single call", weatherTools, `[TOOL_CALLS][{"name": "add", "arguments":{"a": 3.5, "b": 4}}]`,
		Result{ToolCalls: []ToolCall{call("add", `{"a": 3.5, "b": 4}`)}, FinishReason: "tool_calls"}},
	{"single call/arguments first", weatherTools, `[TOOL_CALLS] [{"arguments":{"city": "San Francisco", "state": "CA", "unit": "celsius"}, "name": "get_current_weather"}]`,
		Result{ToolCalls: []ToolCall{call("get_current_weather", `{"city": "San Francisco", "state": "CA", "unit": "celsius"}`)}, FinishReason: "tool_calls"}},
	{"single call/name inside arguments", weatherTools, `[TOOL_CALLS] [{"arguments":{"name": "John Doe"}, "name": "get_age"}]`,
		Result{ToolCalls: []ToolCall{call("get_age", `{"name": "John Doe"}`)}, FinishReason: "tool_calls"}},
	{"single call/spaced JSON", weatherTools, `[TOOL_CALLS]  [ {"name":"add" , "arguments" : {"a": 3, "b": 4} } ]`,
		Result{ToolCalls: []ToolCall{call("add", `{"a": 3, "b": 4}`)}, FinishReason: "tool_calls"}},
	{"single call/missing arguments", weatherTools, `[TOOL_CALLS][{"name": "now"}]`,
		Result{ToolCalls: []ToolCall{call("now", `{}`)}, FinishReason: "tool_calls"}},
	{"parallel calls", weatherTools, `[TOOL_CALLS] [{"name": "add", "arguments": {"a": 3.5, "b": 4}}, {"name": "get_current_weather", "arguments":{"city": "San Francisco", "state": "CA", "unit": "celsius"}}]`,
		Result{ToolCalls: []ToolCall{call("add", `{"a": 3.5, "b": 4}`), call("get_current_weather", `{"city": "San Francisco", "state": "CA", "unit": "celsius"}`)}, FinishReason: "tool_calls"}},
	{"call after text", weatherTools, `Hello[TOOL_CALLS] [{"name": "add", "arguments":{"a": 1, "b": 2}}]`,
		Result{Content: new("Hello"), ToolCalls: []ToolCall{call("add", `{"a": 1, "b": 2}`)}, FinishReason: "tool_calls"}},
	{"trailing data ignored", weatherTools, "[TOOL_CALLS] [{\"name\": \"get_current_weather\", \"arguments\":{\"city\": \"Dallas\", \"state\": \"TX\", \"unit\": \"fahrenheit\"}}]\nextra trailing data",
		Result{ToolCalls: []ToolCall{call("get_current_weather", `{"city": "Dallas", "state": "TX", "unit": "fahrenheit"}`)}, FinishReason: "tool_calls"}},
	{"regex fallback", weatherTools, `[TOOL_CALLS]  junk [{"name": "add", "arguments":{"a": 1, "b": 2}}] trail`,
		Result{ToolCalls: []ToolCall{call("add", `{"a": 1, "b": 2}`)}, FinishReason: "tool_calls"}},
	{"regex fallback fails", weatherTools, "[TOOL_CALLS] not json at all", Result{Content: new("[TOOL_CALLS] not json at all"), FinishReason: "stop"}},
	{"empty list", weatherTools, "x [TOOL_CALLS] []", Result{Content: new("x "), FinishReason: "stop"}},
	{"malformed/second marker", weatherTools, `[TOOL_CALLS] [{"name": "add", "arguments":{"a": 1}}][TOOL_CALLS] [{"name": "sub", "arguments":{"b": 2}}]`,
		Result{Content: new(`[TOOL_CALLS] [{"name": "add", "arguments":{"a": 1}}][TOOL_CALLS] [{"name": "sub", "arguments":{"b": 2}}]`), FinishReason: "stop"}},
	{"malformed/name not a string", weatherTools, `[TOOL_CALLS][{"name": 1}]`, Result{Content: new(`[TOOL_CALLS][{"name": 1}]`), FinishReason: "stop"}},
	{"truncated", weatherTools, `ok[TOOL_CALLS][{"name": "add", "arguments":{"a": 1`, Result{Content: new(`ok[TOOL_CALLS][{"name": "add", "arguments":{"a": 1`), FinishReason: "stop"}},
}

func TestMistralV11Cases(t *testing.T) {
	r := rand.New(rand.NewPCG(81, 82))
	for _, tc := range mistralV11Cases {
		t.Run(tc.name, func(t *testing.T) { checkMistral(t, r, mistralV11, tc) })
	}
}

func TestMistralPreV11Cases(t *testing.T) {
	r := rand.New(rand.NewPCG(83, 84))
	for _, tc := range mistralPreV11Cases {
		t.Run(tc.name, func(t *testing.T) { checkMistral(t, r, mistralPreV1, tc) })
	}
}

func TestMistralNeedsToolCallsToken(t *testing.T) {
	if _, err := New(mistralOnly, testVocab, mustRequest(t, weatherTools), nil); err == nil {
		t.Fatal("want an error for a vocabulary without [TOOL_CALLS]")
	}
}

func TestMistralStreamsEarly(t *testing.T) {
	p, err := New(mistralOnly, mistralPreV1, mustRequest(t, weatherTools), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := pushDelta(p, "Sure [TOOL_"); d.Content != "Sure " {
		t.Fatalf("content before the marker held back: %+v", d)
	}
	d := pushDelta(p, `CALLS] [{"name": "get_weather", "arguments": {"city": "To`)
	if len(d.ToolCalls) != 1 || d.ToolCalls[0].Name != "get_weather" || d.ToolCalls[0].Arguments != `{"city": "To` || len(d.ToolCalls[0].ID) != 9 {
		t.Fatalf("call not streamed: %+v", d)
	}
}

var mistralFuzzPieces = []string{"[TOOL_CALLS]", "[ARGS]", "[TOOL_", " ", "\n", "[", "]", "{", "}", `"name"`, `"arguments"`,
	": ", ", ", `"a"`, "1", "text", `""`, "東京"}

func FuzzMistral(f *testing.F) {
	f.Add([]byte{15, 0, 5, 7, 9, 11, 13, 12, 10, 11, 7, 8, 8, 6}, uint64(1), false)
	f.Add([]byte{0, 13, 1, 7, 13, 11, 14, 8, 0, 15, 7}, uint64(2), true)
	f.Fuzz(func(t *testing.T, recipe []byte, seed uint64, v11 bool) {
		if len(recipe) > 200 {
			return
		}
		var sb strings.Builder
		for _, b := range recipe {
			sb.WriteString(mistralFuzzPieces[int(b)%len(mistralFuzzPieces)])
		}
		text := sb.String()
		v := Vocab(mistralPreV1)
		if v11 {
			v = mistralV11
		}
		req := mustRequest(t, weatherTools)
		batch := runMistral(t, v, req, text, nil)
		stream := runMistral(t, v, req, text, randomCuts(len(text), rand.New(rand.NewPCG(seed, 9))))
		if !reflect.DeepEqual(normalise(stream), normalise(batch)) {
			t.Fatalf("%q:\nstream %s\n batch %s", text, dump(stream), dump(batch))
		}
		if len(batch.ToolCalls) > 0 && batch.Content != nil && strings.Contains(*batch.Content, mistralBot) {
			t.Fatalf("%q: marker leaked into content %q", text, *batch.Content)
		}
	})
}
