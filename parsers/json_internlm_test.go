package parsers

import "testing"

var internlmOnly = Config{ToolParser: "internlm", EnableAutoToolChoice: true}

// The outputs and expectations of the first cases are those of vLLM's
// tests/tool_parsers/test_internlm2_tool_parser.py; the malformed ones are
// inputs where vLLM raises (see the deviation in json_internlm.go).
var internlmCases = []toolCase{
	{"plain text", weatherTools, "This is a regular response without any tool calls.",
		Result{Content: new("This is a regular response without any tool calls."), FinishReason: "stop"}},
	{"single call", weatherTools, `<|action_start|><|plugin|>{"name": "get_weather", "parameters": {"city": "Tokyo"}}<|action_end|>`,
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Tokyo"}`)}, FinishReason: "tool_calls"}},
	{"single call/empty arguments", weatherTools, `<|action_start|><|plugin|>{"name": "refresh", "parameters": {}}<|action_end|>`,
		Result{ToolCalls: []ToolCall{call("refresh", `{}`)}, FinishReason: "tool_calls"}},
	{"single call/various data types", weatherTools, "<|action_start|><|plugin|>{\n  \"name\": \"test_function\",\n  \"parameters\": {\n    \"string_field\": \"hello\",\n    \"int_field\": 42,\n    \"float_field\": 3.14,\n    \"bool_field\": true,\n    \"null_field\": null,\n    \"array_field\": [\"a\", \"b\", \"c\"],\n    \"object_field\": {\"nested\": \"value\"},\n    \"empty_array\": [],\n    \"empty_object\": {}\n  }\n}<|action_end|>",
		Result{ToolCalls: []ToolCall{call("test_function", `{"string_field": "hello", "int_field": 42, "float_field": 3.14, "bool_field": true, "null_field": null, "array_field": ["a", "b", "c"], "object_field": {"nested": "value"}, "empty_array": [], "empty_object": {}}`)}, FinishReason: "tool_calls"}},
	{"single call/escaped strings", weatherTools, "<|action_start|><|plugin|>{\n  \"name\": \"test_function\",\n  \"parameters\": {\n    \"quoted\": \"He said \\\"hello\\\"\",\n    \"path\": \"C:\\\\Users\\\\file.txt\",\n    \"newline\": \"line1\\nline2\",\n    \"unicode\": \"emoji: 🎉\"\n  }\n}<|action_end|>",
		Result{ToolCalls: []ToolCall{call("test_function", `{"quoted": "He said \"hello\"", "path": "C:\\Users\\file.txt", "newline": "line1\nline2", "unicode": "emoji: 🎉"}`)}, FinishReason: "tool_calls"}},
	{"single call/string parameters", weatherTools, `<|action_start|><|plugin|>{"name": "func", "parameters": "not a dict"}<|action_end|>`,
		Result{ToolCalls: []ToolCall{call("func", `"not a dict"`)}, FinishReason: "tool_calls"}},
	{"single call/arguments key", weatherTools, `<|action_start|><|plugin|>{"name": "f", "arguments": {"x": 1.50}}<|action_end|>`,
		Result{ToolCalls: []ToolCall{call("f", `{"x": 1.5}`)}, FinishReason: "tool_calls"}},
	{"single call/parameters win over arguments", weatherTools, `<|action_start|><|plugin|>{"name": "f", "arguments": {"a": 1}, "parameters": {"p": 2}}<|action_end|>`,
		Result{ToolCalls: []ToolCall{call("f", `{"p": 2}`)}, FinishReason: "tool_calls"}},
	{"single call/no arguments", weatherTools, `<|action_start|><|plugin|>{"name": "f"}<|action_end|>`,
		Result{ToolCalls: []ToolCall{call("f", `{}`)}, FinishReason: "tool_calls"}},
	{"single call/text before brace and after end dropped", weatherTools, "<|action_start|><|plugin|>\nf(\n{\"name\": \"f\", \"parameters\": {}}\n<|action_end|> more",
		Result{ToolCalls: []ToolCall{call("f", `{}`)}, FinishReason: "tool_calls"}},
	{"single call/without end marker", weatherTools, `<|action_start|><|plugin|>{"name": "f", "parameters": [1e-7]} `,
		Result{ToolCalls: []ToolCall{call("f", `[1e-07]`)}, FinishReason: "tool_calls"}},
	{"call after text", weatherTools, `Let me check the weather for you. <|action_start|><|plugin|>{"name": "get_weather", "parameters": {"city": "Tokyo"}}<|action_end|>`,
		Result{Content: new("Let me check the weather for you. "), ToolCalls: []ToolCall{call("get_weather", `{"city": "Tokyo"}`)}, FinishReason: "tool_calls"}},
	{"plain text/action start without plugin", weatherTools, `<|action_start|>{"name": "func"}`,
		Result{Content: new(`<|action_start|>{"name": "func"}`), FinishReason: "stop"}},
	{"malformed/not json", weatherTools, "<|action_start|><|plugin|>not json<|action_end|>",
		Result{Content: new("<|action_start|><|plugin|>not json<|action_end|>"), FinishReason: "stop"}},
	{"malformed/empty action", weatherTools, "<|action_start|><|plugin|>", Result{Content: new("<|action_start|><|plugin|>"), FinishReason: "stop"}},
	{"malformed/second start", weatherTools, `<|action_start|><|plugin|>{"name": "a"}<|action_end|><|action_start|><|plugin|>{"name": "b"}<|action_end|>`,
		Result{Content: new(`<|action_start|><|plugin|>{"name": "a"}<|action_end|><|action_start|><|plugin|>{"name": "b"}<|action_end|>`), FinishReason: "stop"}},
	{"malformed/text after object", weatherTools, `<|action_start|><|plugin|>{"name": "a"} x<|action_end|>`,
		Result{Content: new(`<|action_start|><|plugin|>{"name": "a"} x<|action_end|>`), FinishReason: "stop"}},
	{"malformed/name not a string", weatherTools, `<|action_start|><|plugin|>{"name": 1}<|action_end|>`,
		Result{Content: new(`<|action_start|><|plugin|>{"name": 1}<|action_end|>`), FinishReason: "stop"}},
	{"truncated/in parameters", weatherTools, `<|action_start|><|plugin|>{"name": "func", "parameters": {`,
		Result{Content: new(`<|action_start|><|plugin|>{"name": "func", "parameters": {`), FinishReason: "stop"}},
	{"unicode", weatherTools, "東京 <|action_start|><|plugin|>{\"name\": \"s\", \"parameters\": {\"q\": \"\\u00e9 \\ud83d\\ude00 <|\"}}<|action_end|>",
		Result{Content: new("東京 "), ToolCalls: []ToolCall{call("s", `{"q": "é 😀 <|"}`)}, FinishReason: "tool_calls"}},
	{"tool_choice/none", `{"tool_choice":"none","tools":[{"type":"function","function":{"name":"a"}}]}`, `<|action_start|><|plugin|>{"name": "a"}<|action_end|>`,
		Result{Content: new(`<|action_start|><|plugin|>{"name": "a"}<|action_end|>`), FinishReason: "stop"}},
}

func TestInternLMCases(t *testing.T) { runToolCases(t, internlmOnly, 51, internlmCases) }

func TestInternLMStreamsEarly(t *testing.T) {
	p, err := New(internlmOnly, testVocab, mustRequest(t, weatherTools), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := pushDelta(p, "Sure! <|action_"); d.Content != "Sure! " {
		t.Fatalf("content before the marker held back: %+v", d)
	}
	d := pushDelta(p, `start|><|plugin|>{"name": "get_weather", "parameters": {"city": "To`)
	if len(d.ToolCalls) != 1 || d.ToolCalls[0].Name != "get_weather" || d.ToolCalls[0].Arguments != `{"city": "To` {
		t.Fatalf("call not streamed: %+v", d)
	}
}

var internlmFuzzPieces = []string{"<|action_start|><|plugin|>", "<|action_end|>", "<|action_start|>", "<|plugin|>", " ", "\n", "{", "}",
	`"name"`, `"parameters"`, `"arguments"`, ": ", ", ", `"a"`, "1", "text", "[]", `"東京"`}

func FuzzInternLM(f *testing.F) {
	f.Add([]byte{15, 0, 6, 8, 11, 13, 12, 9, 11, 6, 7, 7, 1, 15}, uint64(1))
	f.Add([]byte{0, 6, 8, 11, 13, 7, 0}, uint64(2))
	f.Fuzz(func(t *testing.T, recipe []byte, seed uint64) {
		fuzzToolParser(t, internlmOnly, internlmFuzzPieces, []string{internlmStart}, recipe, seed)
	})
}
