package parsers

import "testing"

var graniteOnly = Config{ToolParser: "granite", EnableAutoToolChoice: true}

// Cases follow vLLM's tests/tool_parsers/test_granite_tool_parser.py
// (outputs and expected names/arguments taken from its config) plus the
// edges of GraniteToolParser.extract_tool_calls.
var graniteToolCases = []toolCase{
	{"plain text", weatherTools, "This is a regular response without any tool calls.",
		Result{Content: new("This is a regular response without any tool calls."), FinishReason: "stop"}},
	{"single call/token prefix", weatherTools, `<|tool_call|> [{"name": "get_weather", "arguments": {"city": "Tokyo"}}]`,
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Tokyo"}`)}, FinishReason: "tool_calls"}},
	{"single call/string prefix", weatherTools, `<tool_call> [{"name": "get_weather", "arguments": {"city": "Tokyo"}}]`,
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Tokyo"}`)}, FinishReason: "tool_calls"}},
	{"single call/both prefixes and whitespace", weatherTools, "\n <|tool_call|><tool_call>\u3000[{\"arguments\": {\"a\": 1.50}, \"name\": \"f\"}] \n",
		Result{ToolCalls: []ToolCall{call("f", `{"a": 1.5}`)}, FinishReason: "tool_calls"}},
	{"single call/bare list", weatherTools, `[{"name": "func", "arguments": "not a dict"}]`,
		Result{ToolCalls: []ToolCall{call("func", `"not a dict"`)}, FinishReason: "tool_calls"}},
	{"single call/various data types", weatherTools, "<tool_call> [{\n  \"name\": \"test_function\",\n  \"arguments\": {\n    \"string_field\": \"hello\",\n    \"int_field\": 42,\n    \"float_field\": 3.14,\n    \"bool_field\": true,\n    \"null_field\": null,\n    \"array_field\": [\"a\", \"b\", \"c\"],\n    \"object_field\": {\"nested\": \"value\"},\n    \"empty_array\": [],\n    \"empty_object\": {}\n  }\n}]",
		Result{ToolCalls: []ToolCall{call("test_function", `{"string_field": "hello", "int_field": 42, "float_field": 3.14, "bool_field": true, "null_field": null, "array_field": ["a", "b", "c"], "object_field": {"nested": "value"}, "empty_array": [], "empty_object": {}}`)}, FinishReason: "tool_calls"}},
	{"single call/escaped strings", weatherTools, "<tool_call> [{\n  \"name\": \"test_function\",\n  \"arguments\": {\n    \"quoted\": \"He said \\\"hello\\\"\",\n    \"path\": \"C:\\\\Users\\\\file.txt\",\n    \"newline\": \"line1\\nline2\",\n    \"unicode\": \"emoji: 🎉\"\n  }\n}]",
		Result{ToolCalls: []ToolCall{call("test_function", `{"quoted": "He said \"hello\"", "path": "C:\\Users\\file.txt", "newline": "line1\nline2", "unicode": "emoji: 🎉"}`)}, FinishReason: "tool_calls"}},
	{"parallel calls", argsCallsTools, "<|tool_call|> [\n  {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}},\n  {\"name\": \"get_time\", \"arguments\": {\"timezone\": \"Asia/Tokyo\"}}\n]",
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Tokyo"}`), call("get_time", `{"timezone": "Asia/Tokyo"}`)}, FinishReason: "tool_calls"}},
	{"parallel calls/arguments before name", argsCallsTools, `<|tool_call|> [{"arguments": {"city": "Tokyo"}, "name": "get_weather"}, {"arguments": {"timezone": "Asia/Tokyo"}, "name": "get_time"}]`,
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Tokyo"}`), call("get_time", `{"timezone": "Asia/Tokyo"}`)}, FinishReason: "tool_calls"}},
	{"parallel calls/parallel_tool_calls false", `{"parallel_tool_calls":false,"tools":[{"type":"function","function":{"name":"a"}}]}`,
		`[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]`,
		Result{ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
	{"empty list", weatherTools, `<|tool_call|>[]`, Result{FinishReason: "stop"}},
	{"call after text/surrounding text is content", weatherTools, "Let me check the weather for you.\n<|tool_call|> [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}]\nI'll get that information.",
		Result{Content: new("Let me check the weather for you.\n<|tool_call|> [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}]\nI'll get that information."), FinishReason: "stop"}},
	{"malformed/text after list", weatherTools, `[{"name": "a", "arguments": {}}] done`,
		Result{Content: new(`[{"name": "a", "arguments": {}}] done`), FinishReason: "stop"}},
	{"malformed/space between markers", weatherTools, `<|tool_call|> <tool_call>[{"name": "a", "arguments": {}}]`,
		Result{Content: new(`<|tool_call|> <tool_call>[{"name": "a", "arguments": {}}]`), FinishReason: "stop"}},
	{"malformed/not an array", weatherTools, `<|tool_call|> {"name": "func", "arguments": {}}`,
		Result{Content: new(`<|tool_call|> {"name": "func", "arguments": {}}`), FinishReason: "stop"}},
	{"malformed/text before JSON", weatherTools, `Some text [{"name": "func"}]`,
		Result{Content: new(`Some text [{"name": "func"}]`), FinishReason: "stop"}},
	{"malformed/missing arguments", weatherTools, `[{"name": "func"}]`, Result{Content: new(`[{"name": "func"}]`), FinishReason: "stop"}},
	{"malformed/name not a string", weatherTools, `[{"name": 1, "arguments": {}}]`, Result{Content: new(`[{"name": 1, "arguments": {}}]`), FinishReason: "stop"}},
	{"malformed/element not an object", weatherTools, `[{"name": "a", "arguments": {}}, 3]`,
		Result{Content: new(`[{"name": "a", "arguments": {}}, 3]`), FinishReason: "stop"}},
	{"truncated/in arguments", weatherTools, `<|tool_call|> [{"name": "func", "arguments": {`,
		Result{Content: new(`<|tool_call|> [{"name": "func", "arguments": {`), FinishReason: "stop"}},
	{"truncated/only markers", weatherTools, " <|tool_call|><tool_", Result{Content: new(" <|tool_call|><tool_"), FinishReason: "stop"}},
	{"unicode", weatherTools, `[{"name": "s", "arguments": {"q": "東京 \u00e9 \ud83d\ude00"}}]` + "\u2003",
		Result{ToolCalls: []ToolCall{call("s", `{"q": "東京 é 😀"}`)}, FinishReason: "tool_calls"}},
	{"tool_choice/none", `{"tool_choice":"none","tools":[{"type":"function","function":{"name":"a"}}]}`, `[{"name": "a", "arguments": {}}]`,
		Result{Content: new(`[{"name": "a", "arguments": {}}]`), FinishReason: "stop"}},
}

func TestGraniteToolCases(t *testing.T) { runToolCases(t, graniteOnly, 21, graniteToolCases) }

func TestGraniteToolStreamsEarly(t *testing.T) {
	p, err := New(graniteOnly, testVocab, mustRequest(t, weatherTools), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := pushDelta(p, "Hello"); d.Content != "Hello" {
		t.Fatalf("plain text held back: %+v", d)
	}
	p, _ = New(graniteOnly, testVocab, mustRequest(t, weatherTools), nil)
	d := pushDelta(p, `<|tool_call|>[{"name": "get_weather", "arguments": {"city": "To`)
	if len(d.ToolCalls) != 1 || d.ToolCalls[0].Name != "get_weather" || d.ToolCalls[0].Arguments != `{"city": "To` || d.Content != "" {
		t.Fatalf("first delta = %+v", d)
	}
}

var graniteFuzzPieces = []string{"<|tool_call|>", "<tool_call>", "<|tool", " ", "\n", "[", "]", "{", "}", `"name"`, `"arguments"`,
	": ", ", ", `"a"`, "1", "text", "\u3000", `"東京"`}

func FuzzGraniteTool(f *testing.F) {
	f.Add([]byte{0, 3, 5, 7, 9, 11, 13, 12, 10, 11, 7, 8, 8, 6}, uint64(1))
	f.Add([]byte{15, 0, 5, 6}, uint64(2))
	f.Fuzz(func(t *testing.T, recipe []byte, seed uint64) {
		fuzzToolParser(t, graniteOnly, graniteFuzzPieces, []string{"<|tool_call|>", "<tool_call>"}, recipe, seed)
	})
}
