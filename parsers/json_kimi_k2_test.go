package parsers

import (
	"strings"
	"testing"
)

var kimiOnly = Config{ToolParser: "kimi_k2", EnableAutoToolChoice: true}

func kimiTool(id, args string) string {
	return kimiCallStart + id + " " + kimiArgStart + args + kimiCallEnd
}

func kimiWrap(calls ...string) string {
	return kimiSectionStart + strings.Join(calls, "") + kimiSectionEnd
}

const kimiTypedTools = `{"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}}}}}]}`

// The first cases are vLLM's tests/tool_parsers/test_kimi_k2_tool_parser.py
// (TestExtractToolCalls and the streaming edge tests: outputs, names,
// contents; arguments are the raw text as the parser returns it).
var kimiCases = []toolCase{
	{"plain text", weatherTools, "This is a test", Result{Content: new("This is a test"), FinishReason: "stop"}},
	{"single call", weatherTools, "I'll check. " + kimiWrap(kimiTool("functions.get_weather:0", `{"city": "Beijing"}`)),
		Result{Content: new("I'll check. "), ToolCalls: []ToolCall{call("get_weather", `{"city": "Beijing"}`)}, FinishReason: "tool_calls"}},
	{"parallel calls", weatherTools, "Compare weather. " + kimiWrap(kimiTool("functions.get_weather:0", `{"city": "Beijing"}`), kimiTool("functions.get_weather:1", `{"city": "Shanghai"}`)),
		Result{Content: new("Compare weather. "), ToolCalls: []ToolCall{call("get_weather", `{"city": "Beijing"}`), call("get_weather", `{"city": "Shanghai"}`)}, FinishReason: "tool_calls"}},
	{"parallel calls/three tools", weatherTools, "Multiple tasks. " + kimiWrap(kimiTool("functions.get_weather:0", `{"city": "New York"}`),
		kimiTool("functions.get_news:1", `{"topic": "technology"}`), kimiTool("functions.send_email:2", `{"to": "user@example.com", "subject": "Daily Update"}`)),
		Result{Content: new("Multiple tasks. "), ToolCalls: []ToolCall{call("get_weather", `{"city": "New York"}`), call("get_news", `{"topic": "technology"}`),
			call("send_email", `{"to": "user@example.com", "subject": "Daily Update"}`)}, FinishReason: "tool_calls"}},
	{"parallel calls/parallel_tool_calls false", `{"parallel_tool_calls":false,"tools":[{"type":"function","function":{"name":"a"}}]}`,
		kimiWrap(kimiTool("functions.a:0", `{}`), kimiTool("functions.b:1", `{}`)),
		Result{ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
	{"single call/angle brackets in JSON", weatherTools, "Process HTML. " + kimiWrap(kimiTool("functions.process_html:0", `{"html": "<div>content</div>"}`)),
		Result{Content: new("Process HTML. "), ToolCalls: []ToolCall{call("process_html", `{"html": "<div>content</div>"}`)}, FinishReason: "tool_calls"}},
	{"single call/multiline JSON kept raw", weatherTools, "Formatted. " + kimiWrap(kimiTool("functions.process_data:0", "{\n  \"name\": \"test\",\n  \"value\": 123\n}")),
		Result{Content: new("Formatted. "), ToolCalls: []ToolCall{call("process_data", "{\n  \"name\": \"test\",\n  \"value\": 123\n}")}, FinishReason: "tool_calls"}},
	{"single call/no functions prefix", weatherTools, "No prefix. " + kimiWrap(kimiTool("get_weather:0", `{"city": "Tokyo"}`)),
		Result{Content: new("No prefix. "), ToolCalls: []ToolCall{call("get_weather", `{"city": "Tokyo"}`)}, FinishReason: "tool_calls"}},
	{"single call/empty arguments", weatherTools, "Empty args. " + kimiWrap(kimiTool("functions.test:0", "{}")),
		Result{Content: new("Empty args. "), ToolCalls: []ToolCall{call("test", `{}`)}, FinishReason: "tool_calls"}},
	{"single call/no argument text", weatherTools, kimiWrap(kimiCallStart + "functions.f:0" + kimiArgStart + " \n" + kimiCallEnd),
		Result{ToolCalls: []ToolCall{call("f", `{}`)}, FinishReason: "tool_calls"}},
	{"single call/bare header names the call without arguments", weatherTools, kimiWrap(kimiCallStart + " get_time " + kimiArgStart + kimiCallEnd),
		Result{ToolCalls: []ToolCall{call("get_time", `{}`)}, FinishReason: "tool_calls"}},
	{"single call/name from arguments when the header does not parse", weatherTools, kimiWrap(kimiTool("functions.x", `{"name": "lookup", "q": 1}`)),
		Result{ToolCalls: []ToolCall{call("lookup", `{"name": "lookup", "q": 1}`)}, FinishReason: "tool_calls"}},
	{"single call/schema coercion re-serialises", kimiTypedTools, kimiWrap(kimiTool("functions.get_weather:0", `{"city":"Paris","days":"3"}`)),
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Paris", "days": 3}`)}, FinishReason: "tool_calls"}},
	{"single call/schema without change keeps raw text", kimiTypedTools, kimiWrap(kimiTool("functions.get_weather:0", ` {"city":"Paris","days":3} `)),
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city":"Paris","days":3}`)}, FinishReason: "tool_calls"}},
	{"invalid JSON still extracted", weatherTools, "Help. " + kimiSectionStart + kimiTool("functions.bad:0", `{"city": "Beijing"`) + kimiTool("functions.good:1", `{"city": "Shanghai"}`) + kimiSectionEnd,
		Result{Content: new("Help. "), ToolCalls: []ToolCall{call("bad", `{"city": "Beijing"`), call("good", `{"city": "Shanghai"}`)}, FinishReason: "tool_calls"}},
	{"invalid funcall id skipped", weatherTools, "Help. " + kimiSectionStart + kimiTool("functions.invalid.0", `{"city": "Beijing"}`) + kimiTool("functions.valid:1", `{"city": "Shanghai"}`) + kimiSectionEnd,
		Result{Content: new("Help. "), ToolCalls: []ToolCall{call("valid", `{"city": "Shanghai"}`)}, FinishReason: "tool_calls"}},
	{"noise between markers dropped", weatherTools, "Reasoning. " + kimiSectionStart + " spurious noise " + kimiCallStart + "functions.test:0 " + kimiArgStart + `{"k": "v"} ` + kimiCallEnd + kimiSectionEnd,
		Result{Content: new("Reasoning. "), ToolCalls: []ToolCall{call("test", `{"k": "v"}`)}, FinishReason: "tool_calls"}},
	{"text after section dropped", weatherTools, "Before. " + kimiWrap(kimiTool("functions.get_weather:0", `{"city": "Tokyo"} `)) + " After tools.",
		Result{Content: new("Before. "), ToolCalls: []ToolCall{call("get_weather", `{"city": "Tokyo"}`)}, FinishReason: "tool_calls"}},
	{"call after whitespace", weatherTools, "\n\n" + kimiWrap(kimiTool("functions.a:0", `{}`)),
		Result{ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
	{"think end dropped from content with calls", weatherTools, "a</think> b " + kimiWrap(kimiTool("functions.a:0", `{}`)),
		Result{Content: new("a b "), ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
	{"think end kept without calls", weatherTools, "a</think> b " + kimiSectionStart + "x",
		Result{Content: new("a</think> b " + kimiSectionStart + "x"), FinishReason: "stop"}},
	{"empty section", weatherTools, "Reasoning. " + kimiSectionStart + kimiSectionEnd,
		Result{Content: new("Reasoning. " + kimiSectionStart + kimiSectionEnd), FinishReason: "stop"}},
	{"markers outside a section are text", weatherTools, kimiCallStart + "functions.a:0" + kimiArgStart + "{}" + kimiCallEnd,
		Result{Content: new(kimiCallStart + "functions.a:0" + kimiArgStart + "{}" + kimiCallEnd), FinishReason: "stop"}},
	{"truncated/no end marker", weatherTools, "I'll check. " + kimiSectionStart + kimiCallStart + "functions.get_weather:0 " + kimiArgStart + `{"city": "Bei`,
		Result{Content: new("I'll check. "), ToolCalls: []ToolCall{call("get_weather", `{"city": "Bei`)}, FinishReason: "tool_calls"}},
	{"truncated/in header", weatherTools, "x " + kimiSectionStart + kimiCallStart + "functions.get_weather:0",
		Result{Content: new("x "), ToolCalls: []ToolCall{call("get_weather", `{}`)}, FinishReason: "tool_calls"}},
	{"unicode", weatherTools, "東京 " + kimiWrap(kimiTool("functions.s:0", "\u3000{\"q\": \"é 😀\"}\u3000")),
		Result{Content: new("東京 "), ToolCalls: []ToolCall{call("s", `{"q": "é 😀"}`)}, FinishReason: "tool_calls"}},
	{"tool_choice/none", `{"tool_choice":"none","tools":[{"type":"function","function":{"name":"a"}}]}`, "a</think>b" + kimiWrap(kimiTool("functions.a:0", `{}`)),
		Result{Content: new("ab"), FinishReason: "stop"}},
	{"single call/name stripped after the functions prefix", weatherTools, kimiWrap(kimiCallStart + " functions. get_weather:1\n" + kimiArgStart + `{"days": true}` + kimiSectionEnd),
		Result{ToolCalls: []ToolCall{call("get_weather", `{"days": true}`)}, FinishReason: "tool_calls"}},
	{"no tools/whitespace content dropped once a call started", `{}`, "\n\n" + kimiWrap(kimiCallStart+"get_weather "+kimiArgStart+`{"days": 2}`+kimiCallEnd),
		Result{FinishReason: "stop"}},
	{"tool_choice/none empty content is null", `{"tool_choice":"none","tools":[{"type":"function","function":{"name":"a"}}]}`, kimiWrap(kimiTool("functions.a:0", `{}`)),
		Result{FinishReason: "stop"}},
}

func TestKimiK2Cases(t *testing.T) { runToolCases(t, kimiOnly, 61, kimiCases) }

func TestKimiK2StreamsEarly(t *testing.T) {
	p, err := New(kimiOnly, testVocab, mustRequest(t, weatherTools), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := pushDelta(p, "Sure! <|tool_calls"); d.Content != "Sure! " {
		t.Fatalf("content before the section held back: %+v", d)
	}
	d := pushDelta(p, "_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|> {\"city\": \"To")
	if len(d.ToolCalls) != 1 || d.ToolCalls[0].Name != "get_weather" || d.ToolCalls[0].ID != "functions.get_weather:0" || d.ToolCalls[0].Arguments != `{"city": "To` {
		t.Fatalf("call not streamed: %+v", d)
	}
}

func TestKimiK2HugeArguments(t *testing.T) {
	long := strings.Repeat(`lorem <|tool \"dolor\" `, 20000)
	args := `{"text": "` + long + `"}`
	text := kimiWrap(kimiTool("functions.w:0", args))
	got, _ := runSplits(t, kimiOnly, mustRequest(t, weatherTools), text, []int{100, 5000, 70000})
	if len(got.ToolCalls) != 1 || got.ToolCalls[0].Arguments != args {
		t.Fatal("huge arguments not passed through exactly")
	}
}

var kimiFuzzPieces = []string{kimiSectionStart, kimiSectionEnd, kimiCallStart, kimiCallEnd, kimiArgStart, "<think>", "</think>", "<|tool_",
	"functions.a:0", "get_b:1", "x", " ", "\n", "{", "}", `"name": "n"`, `"k": 1`, "\u3000", "東京"}

func FuzzKimiK2(f *testing.F) {
	f.Add([]byte{10, 0, 2, 8, 4, 13, 16, 14, 3, 1, 10}, uint64(1))
	f.Add([]byte{6, 0, 2, 11, 4, 15, 2, 9}, uint64(2))
	f.Fuzz(func(t *testing.T, recipe []byte, seed uint64) {
		fuzzToolParser(t, kimiOnly, kimiFuzzPieces, []string{kimiSectionStart}, recipe, seed)
	})
}
