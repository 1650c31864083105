package parsers

import (
	"strings"
	"testing"
)

var hunyuanOnly = Config{ToolParser: "hunyuan_a13b", EnableAutoToolChoice: true}

// hyToolCases: the first six are vLLM's
// tests/tool_parsers/test_hunyuan_a13b_tool_parser.py extract cases (and
// its non-ASCII test) with their expectations; the rest are read from the
// parser and the chat server's handling of tools_called.
var hyToolCases = []toolCase{
	{"vllm/no tool call", weatherTools, "How can I help you today?", Result{Content: new("How can I help you today?"), FinishReason: "stop"}},
	{"vllm/single call", weatherTools, `<tool_calls>[{"name": "get_weather", "arguments": {"city": "San Francisco", "metric": "celsius"}}]</tool_calls>`,
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "San Francisco", "metric": "celsius"}`)}, FinishReason: "tool_calls"}},
	{"vllm/multiple calls", weatherTools, `<tool_calls>[{"name": "get_weather", "arguments": {"city": "San Francisco", "metric": "celsius"}}, {"name": "register_user", "arguments": {"name": "John Doe", "age": 37, "address": {"city": "San Francisco", "state": "CA"}, "role": null, "passed_test": true, "aliases": ["John", "Johnny"]}}]</tool_calls>`,
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "San Francisco", "metric": "celsius"}`),
			call("register_user", `{"name": "John Doe", "age": 37, "address": {"city": "San Francisco", "state": "CA"}, "role": null, "passed_test": true, "aliases": ["John", "Johnny"]}`)}, FinishReason: "tool_calls"}},
	{"vllm/content before", weatherTools, `I will call the tool now. <tool_calls>[{"name": "get_weather", "arguments": {"city": "Boston"}}]</tool_calls>`,
		Result{Content: new("I will call the tool now. "), ToolCalls: []ToolCall{call("get_weather", `{"city": "Boston"}`)}, FinishReason: "tool_calls"}},
	{"vllm/content after dropped", weatherTools, "<tool_calls>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Seattle\"}}]</tool_calls>\nThank you!",
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Seattle"}`)}, FinishReason: "tool_calls"}},
	{"vllm/nested arguments", weatherTools, `<tool_calls>[{"name": "complex_tool", "arguments": {"level1": {"level2": {"level3": {"value": 123}}}}}]</tool_calls>`,
		Result{ToolCalls: []ToolCall{call("complex_tool", `{"level1": {"level2": {"level3": {"value": 123}}}}`)}, FinishReason: "tool_calls"}},
	{"vllm/non-ASCII kept", weatherTools, `<tool_calls>[{"name": "get_weather", "arguments": {"city": "北京"}}]</tool_calls>`,
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "北京"}`)}, FinishReason: "tool_calls"}},
	{"blank prefix is null", weatherTools, "\n\n <tool_calls>\n[{\"name\": \"a\", \"arguments\": {}}]\n</tool_calls>",
		Result{ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
	{"string arguments taken as is", weatherTools, `<tool_calls>[{"name": "a", "arguments": "{\"x\":1}"}]</tool_calls>`,
		Result{ToolCalls: []ToolCall{call("a", `{"x":1}`)}, FinishReason: "tool_calls"}},
	{"bad elements skipped", weatherTools, `<tool_calls>[1, {"name": "a"}, {"name": "b", "arguments": {"y": 1.0}}]</tool_calls>`,
		Result{ToolCalls: []ToolCall{call("b", `{"y": 1.0}`)}, FinishReason: "tool_calls"}},
	{"number arguments void all", weatherTools, `Hi <tool_calls>[{"name": "b", "arguments": {}}, {"name": "a", "arguments": 3}]</tool_calls> bye`,
		Result{Content: new(`Hi <tool_calls>[{"name": "b", "arguments": {}}, {"name": "a", "arguments": 3}]</tool_calls> bye`), FinishReason: "stop"}},
	{"not a list", weatherTools, `<tool_calls>{"name": "a", "arguments": {}}</tool_calls> x`,
		Result{Content: new(`<tool_calls>{"name": "a", "arguments": {}}</tool_calls> x`), FinishReason: "stop"}},
	{"empty list", weatherTools, "助手：<tool_calls>[]</tool_calls>", Result{Content: new("助手：<tool_calls>[]</tool_calls>"), FinishReason: "stop"}},
	{"invalid block skipped for the next", weatherTools, `a <tool_calls>[{oops}]</tool_calls> b <tool_calls>[{"name": "c", "arguments": {}}]</tool_calls> d`,
		Result{Content: new(`a <tool_calls>[{oops}]</tool_calls> b `), ToolCalls: []ToolCall{call("c", `{}`)}, FinishReason: "tool_calls"}},
	{"unclosed block", weatherTools, `<tool_calls>[{"name": "c", "arguments": {}}]`,
		Result{Content: new(`<tool_calls>[{"name": "c", "arguments": {}}]`), FinishReason: "stop"}},
	{"block inside think skipped", weatherTools, `<think>maybe <tool_calls>[{"name": "x", "arguments": {}}]</tool_calls></think>now <tool_calls>[{"name": "y", "arguments": {}}]</tool_calls>`,
		Result{Content: new(`<think>maybe <tool_calls>[{"name": "x", "arguments": {}}]</tool_calls></think>now `), ToolCalls: []ToolCall{call("y", `{}`)}, FinishReason: "tool_calls"}},
	{"block in unclosed think counts", weatherTools, `<think>maybe <tool_calls>[{"name": "x", "arguments": {}}]</tool_calls> more`,
		Result{Content: new(`<think>maybe `), ToolCalls: []ToolCall{call("x", `{}`)}, FinishReason: "tool_calls"}},
	{"think closed inside the block", weatherTools, `<think>a<tool_calls>[{"name": "x", "arguments": {"s": "</think>"}}]</tool_calls>`,
		Result{Content: new(`<think>a`), ToolCalls: []ToolCall{call("x", `{"s": "</think>"}`)}, FinishReason: "tool_calls"}},
	{"think opened inside the block", weatherTools, `<tool_calls>[{"name": "x", "arguments": {"s": "<think>"}}]</tool_calls></think>`,
		Result{ToolCalls: []ToolCall{call("x", `{"s": "<think>"}`)}, FinishReason: "tool_calls"}},
	{"parallel_tool_calls false", `{"parallel_tool_calls":false,"tools":[{"type":"function","function":{"name":"a"}}]}`,
		`<tool_calls>[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]</tool_calls>`,
		Result{ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
}

func TestHunyuanA13BCases(t *testing.T) { runToolCases(t, hunyuanOnly, 23, hyToolCases) }

func TestHunyuanA13BStreamsText(t *testing.T) {
	p, err := New(hunyuanOnly, testVocab, mustRequest(t, weatherTools), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := pushDelta(p, "Let me check. <tool_"); d.Content != "Let me check. " {
		t.Fatalf("text before a block not streamed: %+v", d)
	}
	if d := pushDelta(p, `calls>[{"name": "a", "arguments": {}}]</tool_calls>`); len(d.ToolCalls) != 1 || d.ToolCalls[0].Arguments != "{}" {
		t.Fatalf("call not emitted at the block's end: %+v", d)
	}
}

var hunyuanFuzzPieces = []string{hyBlockOpen, hyBlockClose, thinkStart, thinkEnd, "<tool_", "[", "]", "{", "}", `"name"`, `"arguments"`,
	": ", ", ", `"a"`, "1", "text ", "\n", "助手：", "<"}

func FuzzHunyuanA13B(f *testing.F) {
	f.Add([]byte{0, 5, 7, 9, 11, 13, 12, 10, 11, 7, 8, 8, 6, 1}, uint64(1))
	f.Add([]byte{2, 0, 5, 6, 1, 3, 15}, uint64(2))
	f.Fuzz(func(t *testing.T, recipe []byte, seed uint64) {
		text, ok := fuzzText(recipe, hunyuanFuzzPieces)
		if !ok {
			return
		}
		batch, acc := streamAgrees(t, hunyuanOnly, mustRequest(t, weatherTools), text, fuzzCuts(text, seed))
		// With calls, content is the text before the winning block.
		if c := acc.Content(); len(batch.ToolCalls) > 0 && (!strings.HasPrefix(text, c) || !strings.HasPrefix(text[len(c):], hyBlockOpen) && strings.TrimSpace(c) != "") {
			t.Fatalf("%q: content %q is not the text before a block", text, c)
		}
	})
}
