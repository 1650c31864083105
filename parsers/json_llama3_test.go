package parsers

import (
	"math/rand/v2"
	"strings"
	"testing"
)

var llamaOnly = Config{ToolParser: "llama3_json", EnableAutoToolChoice: true}

var llama3JSONCases = []toolCase{
	{"plain text", weatherTools, "The capital of France is Paris.", Result{Content: new("The capital of France is Paris."), FinishReason: "stop"}},
	{"plain text/python tag without JSON", weatherTools, "<|python_tag|>hello", Result{Content: new("<|python_tag|>hello"), FinishReason: "stop"}},
	{"single call/parameters", weatherTools, `{"name": "get_weather", "parameters": {"city": "Paris"}}`,
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Paris"}`)}, FinishReason: "tool_calls"}},
	{"single call/arguments", weatherTools, `<|python_tag|>{"name":"get_weather","arguments":{"city":"Paris"}}`,
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Paris"}`)}, FinishReason: "tool_calls"}},
	{"single call/pretty JSON", weatherTools, "{\n  \"name\": \"search\",\n  \"parameters\": {\n    \"query\": \"x\",\n    \"top_k\": 2\n  }\n}",
		Result{ToolCalls: []ToolCall{call("search", `{"query": "x", "top_k": 2}`)}, FinishReason: "tool_calls"}},
	{"single call/arguments win over parameters", weatherTools, `{"parameters": {"a": 1}, "arguments": {"b": 2}, "name": "f"}`,
		Result{ToolCalls: []ToolCall{call("f", `{"b": 2}`)}, FinishReason: "tool_calls"}},
	{"single call/string arguments re-quoted", weatherTools, `{"name": "f", "arguments": "{\"a\": 1}"}`,
		Result{ToolCalls: []ToolCall{call("f", `"{\"a\": 1}"`)}, FinishReason: "tool_calls"}},
	{"single call/python number and unicode forms", weatherTools, `{"name": "f", "parameters": {"x": 1.50, "y": 1e-7, "s": "\u00e9 東京", "n": -0}}`,
		Result{ToolCalls: []ToolCall{call("f", `{"x": 1.5, "y": 1e-07, "s": "é 東京", "n": 0}`)}, FinishReason: "tool_calls"}},
	{"parallel calls/semicolon", weatherTools, `{"name": "a", "parameters": {"c": "A"}}; {"name": "b", "parameters": {"c": "B"}}`,
		Result{ToolCalls: []ToolCall{call("a", `{"c": "A"}`), call("b", `{"c": "B"}`)}, FinishReason: "tool_calls"}},
	{"parallel calls/parallel_tool_calls false", `{"parallel_tool_calls":false,"tools":[{"type":"function","function":{"name":"a"}}]}`,
		`{"name": "a", "parameters": {}}; {"name": "b", "parameters": {}}`,
		Result{ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
	{"parallel calls/brace right after an object is skipped", weatherTools, `{"name": "a", "parameters": 1}{"name": "b", "parameters": 2}`,
		Result{ToolCalls: []ToolCall{call("a", `1`)}, FinishReason: "tool_calls"}},
	{"call after text/text dropped", weatherTools, `Sure! {"name": "get_weather", "parameters": {"city": "Paris"}}`,
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Paris"}`)}, FinishReason: "tool_calls"}},
	{"call after text/text after dropped", weatherTools, "{\"name\": \"a\", \"parameters\": {}}\nHope that helps!",
		Result{ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
	{"malformed/braces in text", weatherTools, "Use {curly} braces like {this}.", Result{Content: new("Use {curly} braces like {this}."), FinishReason: "stop"}},
	{"malformed/missing name", weatherTools, `{"parameters": {"city": "Paris"}}`, Result{Content: new(`{"parameters": {"city": "Paris"}}`), FinishReason: "stop"}},
	{"malformed/missing arguments", weatherTools, `{"name": "a"}`, Result{Content: new(`{"name": "a"}`), FinishReason: "stop"}},
	{"malformed/name not a string", weatherTools, `{"name": 5, "parameters": {}}`, Result{Content: new(`{"name": 5, "parameters": {}}`), FinishReason: "stop"}},
	{"malformed/later brace breaks all", weatherTools, `{"name": "a", "parameters": {}} then {oops}`,
		Result{Content: new(`{"name": "a", "parameters": {}} then {oops}`), FinishReason: "stop"}},
	{"malformed/brace after object skipped, inner one breaks all", weatherTools, `{"name": "a", "parameters": {}}{"name": "b", "parameters": {"y": 2}}`,
		Result{Content: new(`{"name": "a", "parameters": {}}{"name": "b", "parameters": {"y": 2}}`), FinishReason: "stop"}},
	{"truncated/in arguments", weatherTools, `{"name": "get_weather", "parameters": {"city": "Par`,
		Result{Content: new(`{"name": "get_weather", "parameters": {"city": "Par`), FinishReason: "stop"}},
	{"truncated/second call", weatherTools, `{"name": "a", "parameters": {}}; {"name": "get_w`,
		Result{Content: new(`{"name": "a", "parameters": {}}; {"name": "get_w`), FinishReason: "stop"}},
	{"tool_choice/none", `{"tool_choice":"none","tools":[{"type":"function","function":{"name":"a"}}]}`, `{"name": "a", "parameters": {}}`,
		Result{Content: new(`{"name": "a", "parameters": {}}`), FinishReason: "stop"}},
	{"tool_choice/required", `{"tool_choice":"required","tools":[{"type":"function","function":{"name":"a"}}]}`, `{"name": "a", "parameters": {}}`,
		Result{Content: new(""), ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
}

func TestLlama3JSONCases(t *testing.T) { runToolCases(t, llamaOnly, 13, llama3JSONCases) }

func TestLlama3JSONStreamsArguments(t *testing.T) {
	p, err := New(llamaOnly, testVocab, mustRequest(t, weatherTools), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := pushDelta(p, `{"name": "get_weather", "parameters": {"city": "Pa`)
	if len(d.ToolCalls) != 1 || d.ToolCalls[0].Name != "get_weather" || d.ToolCalls[0].Arguments != `{"city": "Pa` || d.Content != "" {
		t.Fatalf("first delta = %+v", d)
	}
}

func TestLlama3JSONHugeArguments(t *testing.T) {
	long := strings.Repeat(`lorem {ipsum} \"dolor\" `, 20000)
	text := `{"name": "w", "parameters": {"text": "` + long + `", "n": 12345678901234567890}}`
	req := mustRequest(t, weatherTools)
	stream, _ := runSplits(t, llamaOnly, req, text, randomCuts(len(text), rand.New(rand.NewPCG(5, 6))))
	if len(stream.ToolCalls) != 1 || stream.ToolCalls[0].Arguments != `{"text": "`+long+`", "n": 12345678901234567890}` {
		t.Fatalf("huge arguments not re-serialised exactly")
	}
}

var llamaFuzzPieces = []string{"{", "}", `"name"`, `"parameters"`, `"arguments"`, ": ", ", ", `"a"`, "1", "[", "]", "; ",
	"<|python_tag|>", "text ", "\n", `"東京"`, "1.50", "null", `\"`}

func FuzzLlama3JSON(f *testing.F) {
	f.Add([]byte{0, 2, 4, 7, 5, 3, 4, 0, 1, 1, 11, 0, 2, 4, 7, 5, 4, 4, 8, 1}, uint64(1))
	f.Add([]byte{13, 0, 6, 1, 0, 1}, uint64(2))
	f.Fuzz(func(t *testing.T, recipe []byte, seed uint64) {
		text, ok := fuzzText(recipe, llamaFuzzPieces)
		if !ok {
			return
		}
		batch, acc := streamAgrees(t, llamaOnly, mustRequest(t, weatherTools), text, fuzzCuts(text, seed))
		if len(batch.ToolCalls) > 0 && acc.Content() != "" {
			t.Fatalf("%q: content %q streamed next to calls", text, acc.Content())
		}
	})
}
