package parsers

import (
	"testing"
)

var phi4Only = Config{ToolParser: "phi4_mini_json", EnableAutoToolChoice: true}

// phi4Cases: the outputs of vLLM's tests/tool_parsers/test_phi4mini_tool_parser.py
// (expectations from that test where it asserts them, including its xfail
// notes on the real behaviour), plus edge cases read from the parser.
var phi4Cases = []toolCase{
	{"vllm/no tool calls", weatherTools, "This is a regular response without any tool calls.",
		Result{Content: new("This is a regular response without any tool calls."), FinishReason: "stop"}},
	{"vllm/single call", weatherTools, `functools[{"name": "get_weather", "arguments": {"city": "Tokyo"}}]`,
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Tokyo"}`)}, FinishReason: "tool_calls"}},
	{"vllm/parallel calls", weatherTools, "functools[\n  {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}},\n  {\"name\": \"get_time\", \"arguments\": {\"timezone\": \"Asia/Tokyo\"}}\n]",
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Tokyo"}`), call("get_time", `{"timezone": "Asia/Tokyo"}`)}, FinishReason: "tool_calls"}},
	{"vllm/various data types: first ] cuts the list", weatherTools, "functools[{\n  \"name\": \"test_function\",\n  \"arguments\": {\n    \"int_field\": 42,\n    \"array_field\": [\"a\", \"b\", \"c\"],\n    \"empty_object\": {}\n  }\n}]",
		Result{FinishReason: "stop"}},
	{"vllm/empty arguments", weatherTools, `functools[{"name": "refresh", "arguments": {}}]`,
		Result{ToolCalls: []ToolCall{call("refresh", `{}`)}, FinishReason: "tool_calls"}},
	{"vllm/surrounding text dropped", weatherTools, "Let me check the weather for you.\nfunctools[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}]\nWould you like to know more?",
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Tokyo"}`)}, FinishReason: "tool_calls"}},
	{"vllm/escaped strings", weatherTools, "functools[{\n  \"name\": \"test_function\",\n  \"arguments\": {\n    \"quoted\": \"He said \\\"hello\\\"\",\n    \"path\": \"C:\\\\Users\\\\file.txt\",\n    \"newline\": \"line1\\nline2\",\n    \"unicode\": \"emoji: 🎉\"\n  }\n}]",
		Result{ToolCalls: []ToolCall{call("test_function", `{"quoted": "He said \"hello\"", "path": "C:\\Users\\file.txt", "newline": "line1\nline2", "unicode": "emoji: 🎉"}`)}, FinishReason: "tool_calls"}},
	{"vllm/malformed/truncated", weatherTools, `functools[{"name": "func", "arguments": {`,
		Result{Content: new(`functools[{"name": "func", "arguments": {`), FinishReason: "stop"}},
	{"vllm/malformed/string arguments are a call", weatherTools, `functools[{"name": "func", "arguments": "not a dict"}]`,
		Result{ToolCalls: []ToolCall{call("func", `"not a dict"`)}, FinishReason: "tool_calls"}},
	{"vllm/malformed/missing brackets", weatherTools, `functools{"name": "func"}`,
		Result{Content: new(`functools{"name": "func"}`), FinishReason: "stop"}},
	{"vllm/malformed/missing arguments", weatherTools, `functools[{"name": "func"}]`,
		Result{Content: new(`functools[{"name": "func"}]`), FinishReason: "stop"}},
	{"vllm/malformed/empty list is tools_called", weatherTools, "functools[] This is just text", Result{FinishReason: "stop"}},
	{"vllm/malformed/invalid JSON is tools_called", weatherTools, "functools[ This is just text ]", Result{FinishReason: "stop"}},
	{"parameters when no arguments", weatherTools, `functools[{"parameters": {"x": 1e-7, "y": 1.50}, "name": "f"}]`,
		Result{ToolCalls: []ToolCall{call("f", `{"x": 1e-07, "y": 1.5}`)}, FinishReason: "tool_calls"}},
	{"arguments win over parameters", weatherTools, `functools[{"name": "f", "arguments": null, "parameters": {}}]`,
		Result{ToolCalls: []ToolCall{call("f", `null`)}, FinishReason: "tool_calls"}},
	{"repeated key keeps the last value", weatherTools, `functools[{"name": "f", "arguments": 1, "name": "g", "arguments": {"a": "é"}}]`,
		Result{ToolCalls: []ToolCall{call("g", `{"a": "é"}`)}, FinishReason: "tool_calls"}},
	{"name not a string", weatherTools, `functools[{"name": 5, "arguments": {}}]`,
		Result{Content: new(`functools[{"name": 5, "arguments": {}}]`), FinishReason: "stop"}},
	{"element not an object", weatherTools, `x functools[{"name": "a", "arguments": {}}, 7] tail`,
		Result{Content: new(`x functools[{"name": "a", "arguments": {}}, 7] tail`), FinishReason: "stop"}},
	{"no ] anywhere", weatherTools, `functools[{"name": "a", "arguments": {}}`,
		Result{Content: new(`functools[{"name": "a", "arguments": {}}`), FinishReason: "stop"}},
	{"partial marker at the end", weatherTools, "see functool", Result{Content: new("see functool"), FinishReason: "stop"}},
	{"second list ignored", weatherTools, `functools[{"name": "a", "arguments": {}}] functools[{"name": "b", "arguments": {}}]`,
		Result{ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
	{"big numbers and NaN", weatherTools, `functools[{"name": "n", "arguments": {"i": 123456789012345678901234567890, "f": 1E400, "n": NaN}}]`,
		Result{ToolCalls: []ToolCall{call("n", `{"i": 123456789012345678901234567890, "f": Infinity, "n": NaN}`)}, FinishReason: "tool_calls"}},
	{"parallel_tool_calls false", `{"parallel_tool_calls":false,"tools":[{"type":"function","function":{"name":"a"}}]}`,
		`functools[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]`,
		Result{ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
	{"tool_choice none", `{"tool_choice":"none","tools":[{"type":"function","function":{"name":"a"}}]}`,
		`functools[{"name": "a", "arguments": {}}]`, Result{Content: new(`functools[{"name": "a", "arguments": {}}]`), FinishReason: "stop"}},
}

func TestPhi4MiniJSONCases(t *testing.T) { runToolCases(t, phi4Only, 21, phi4Cases) }

func TestPhi4MiniJSONFallbackStreams(t *testing.T) {
	p, err := New(phi4Only, testVocab, mustRequest(t, weatherTools), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := pushDelta(p, `functools[{"name": 1, "arguments": {}}]`); d.Content == "" {
		t.Fatalf("content held after a no-calls verdict: %+v", d)
	}
	if d := pushDelta(p, "more"); d.Content != "more" {
		t.Fatalf("later text not streamed: %+v", d)
	}
}

var phi4FuzzPieces = []string{"functools[", "functools", "[", "]", "{", "}", `"name"`, `"arguments"`, `"parameters"`, ": ", ", ",
	`"a"`, "1", "null", "text ", "\n", `"東京"`, `"x]"`}

func FuzzPhi4MiniJSON(f *testing.F) {
	f.Add([]byte{0, 4, 6, 8, 11, 10, 7, 8, 4, 5, 5, 3}, uint64(1))
	f.Add([]byte{14, 0, 3, 14}, uint64(2))
	f.Fuzz(func(t *testing.T, recipe []byte, seed uint64) {
		text, ok := fuzzText(recipe, phi4FuzzPieces)
		if !ok {
			return
		}
		batch, acc := streamAgrees(t, phi4Only, mustRequest(t, weatherTools), text, fuzzCuts(text, seed))
		if len(batch.ToolCalls) > 0 && acc.Content() != "" {
			t.Fatalf("%q: content %q next to calls", text, acc.Content())
		}
	})
}
