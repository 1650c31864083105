package parsers

import "testing"

var jambaOnly = Config{ToolParser: "jamba", EnableAutoToolChoice: true}

const jambaDallas = `{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}}`

// The first cases are vLLM's tests/tool_parsers/test_jamba_tool_parser.py
// (outputs, calls and contents as expected there); the rest are edges of
// JambaToolParser.extract_tool_calls.
var jambaCases = []toolCase{
	{"plain text", weatherTools, "This is a test", Result{Content: new("This is a test"), FinishReason: "stop"}},
	{"single call", weatherTools, " <tool_calls>[\n    " + jambaDallas + "\n]</tool_calls>",
		Result{ToolCalls: []ToolCall{call("get_current_weather", `{"city": "Dallas", "state": "TX", "unit": "fahrenheit"}`)}, FinishReason: "tool_calls"}},
	{"call after text", weatherTools, " Sure! let me call the tool for you.<tool_calls>[\n    " + jambaDallas + "\n]</tool_calls>",
		Result{Content: new(" Sure! let me call the tool for you."), ToolCalls: []ToolCall{call("get_current_weather", `{"city": "Dallas", "state": "TX", "unit": "fahrenheit"}`)}, FinishReason: "tool_calls"}},
	{"parallel calls", weatherTools, " <tool_calls>[\n    " + jambaDallas + ",\n    " + `{"name": "get_current_weather", "arguments": {"city": "Orlando", "state": "FL", "unit": "fahrenheit"}}` + "\n]</tool_calls>",
		Result{ToolCalls: []ToolCall{call("get_current_weather", `{"city": "Dallas", "state": "TX", "unit": "fahrenheit"}`),
			call("get_current_weather", `{"city": "Orlando", "state": "FL", "unit": "fahrenheit"}`)}, FinishReason: "tool_calls"}},
	{"parallel calls/parallel_tool_calls false", `{"parallel_tool_calls":false,"tools":[{"type":"function","function":{"name":"a"}}]}`,
		`<tool_calls>[{"name": "a", "arguments": {}}, {"name": "b", "arguments": 1e-7}]</tool_calls>`,
		Result{ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
	{"text after calls dropped", weatherTools, `Hi <tool_calls>[{"arguments": [1.50, "é"], "name": "a"}]</tool_calls> bye <tool_calls>`,
		Result{Content: new("Hi "), ToolCalls: []ToolCall{call("a", `[1.5, "é"]`)}, FinishReason: "tool_calls"}},
	{"empty list", weatherTools, `Hi<tool_calls>[]</tool_calls>`, Result{Content: new("Hi"), FinishReason: "stop"}},
	{"empty object iterates nothing", weatherTools, `<tool_calls> {} </tool_calls>`, Result{FinishReason: "stop"}},
	{"malformed/object is not a list", weatherTools, `<tool_calls>{"name": "a", "arguments": {}}</tool_calls>`,
		Result{Content: new(`<tool_calls>{"name": "a", "arguments": {}}</tool_calls>`), FinishReason: "stop"}},
	{"malformed/extra data", weatherTools, `x<tool_calls>[{"name": "a", "arguments": {}}] y</tool_calls>`,
		Result{Content: new(`x<tool_calls>[{"name": "a", "arguments": {}}] y</tool_calls>`), FinishReason: "stop"}},
	{"malformed/end tag inside string", weatherTools, `<tool_calls>[{"name": "a", "arguments": {"s": "</tool_calls>"}}]</tool_calls>`,
		Result{Content: new(`<tool_calls>[{"name": "a", "arguments": {"s": "</tool_calls>"}}]</tool_calls>`), FinishReason: "stop"}},
	{"malformed/missing arguments", weatherTools, `<tool_calls>[{"name": "a"}]</tool_calls>`,
		Result{Content: new(`<tool_calls>[{"name": "a"}]</tool_calls>`), FinishReason: "stop"}},
	{"truncated/no end tag", weatherTools, `ok <tool_calls>[{"name": "a", "arguments": {}}]`,
		Result{Content: new(`ok <tool_calls>[{"name": "a", "arguments": {}}]`), FinishReason: "stop"}},
	{"truncated/partial marker", weatherTools, `ok <tool_cal`, Result{Content: new(`ok <tool_cal`), FinishReason: "stop"}},
	{"unicode", weatherTools, "東京<tool_calls>[{\"name\": \"s\", \"arguments\": {\"q\": \"\\u00e9 \\ud83d\\ude00\"}}]</tool_calls>",
		Result{Content: new("東京"), ToolCalls: []ToolCall{call("s", `{"q": "é 😀"}`)}, FinishReason: "tool_calls"}},
	{"tool_choice/none", `{"tool_choice":"none","tools":[{"type":"function","function":{"name":"a"}}]}`, `<tool_calls>[{"name": "a", "arguments": {}}]</tool_calls>`,
		Result{Content: new(`<tool_calls>[{"name": "a", "arguments": {}}]</tool_calls>`), FinishReason: "stop"}},
}

func TestJambaCases(t *testing.T) { runToolCases(t, jambaOnly, 31, jambaCases) }

func TestJambaStreamsEarly(t *testing.T) {
	p, err := New(jambaOnly, testVocab, mustRequest(t, weatherTools), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := pushDelta(p, "Sure! <tool_c"); d.Content != "Sure! " {
		t.Fatalf("content before the marker held back: %+v", d)
	}
	d := pushDelta(p, `alls>[{"name": "get_weather", "arguments": {"city": "To`)
	if len(d.ToolCalls) != 1 || d.ToolCalls[0].Name != "get_weather" || d.ToolCalls[0].Arguments != `{"city": "To` {
		t.Fatalf("call not streamed: %+v", d)
	}
}

var jambaFuzzPieces = []string{"<tool_calls>", "</tool_calls>", "<tool_", " ", "\n", "[", "]", "{", "}", `"name"`, `"arguments"`,
	": ", ", ", `"a"`, "1", "text", `""`, `"東京"`}

func FuzzJamba(f *testing.F) {
	f.Add([]byte{15, 0, 5, 7, 9, 11, 13, 12, 10, 11, 7, 8, 8, 6, 1}, uint64(1))
	f.Add([]byte{0, 16, 1}, uint64(2))
	f.Fuzz(func(t *testing.T, recipe []byte, seed uint64) {
		fuzzToolParser(t, jambaOnly, jambaFuzzPieces, []string{"<tool_calls>"}, recipe, seed)
	})
}
