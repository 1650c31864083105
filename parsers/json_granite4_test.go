package parsers

import (
	"strings"
	"testing"
)

var granite4Only = Config{ToolParser: "granite4", EnableAutoToolChoice: true}

// granite4Complex is the output of vLLM's test_tool_call_parser_complex
// (tests/tool_parsers/test_granite4_tool_parser.py) with string arguments
// for the bbox calls; its expected content is the four text messages
// joined and its calls are the input dicts.
var granite4Complex = "Here goes the bbox call: \n" +
	`<tool_call> {"name": "find_bbox", "arguments": "{\"coordinates\": [[23.54, 43.1], [-12.2, 54.3], [4, 5]], \"coordinate_type\": \"latlong\"}"} </tool_call>` +
	" Now the stock price call: \n " +
	`<tool_call> {"name": "get_stock_price", "arguments": {"symbol": "AAPL", "start_date": "2021-01-01", "end_date": "2021-12-31"}} </tool_call>` +
	" Now another bbox call: \n " +
	`<tool_call> {"name": "find_bbox", "arguments": "{\"coordinates\": [[23.54, 43.1], [-12.2, 54.3], [4, 5]], \"coordinate_type\": \"latlong\"}"} </tool_call>` +
	" See? I'm a helpful assistant."

const granite4Bbox = `{"coordinates": [[23.54, 43.1], [-12.2, 54.3], [4, 5]], "coordinate_type": "latlong"}`

var granite4Cases = []toolCase{
	{"plain text", weatherTools, "Just text, </tool no calls.", Result{Content: new("Just text, </tool no calls."), FinishReason: "stop"}},
	{"single call", weatherTools, `<tool_call>{"name": "get_weather", "arguments": {"city": "Tokyo", "n": 1.0}}</tool_call>`,
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Tokyo", "n": 1.0}`)}, FinishReason: "tool_calls"}},
	{"single call/arguments before name", weatherTools, "<tool_call>\n{\"arguments\": [1e-7], \"name\": \"f\"}\n</tool_call>",
		Result{ToolCalls: []ToolCall{call("f", `[1e-07]`)}, FinishReason: "tool_calls"}},
	{"single call/string arguments passed through", weatherTools, `<tool_call>{"name": "f", "arguments": "not json \u00e9"}</tool_call>`,
		Result{ToolCalls: []ToolCall{call("f", `not json é`)}, FinishReason: "tool_calls"}},
	{"parallel calls/vLLM complex case", argsCallsTools, granite4Complex,
		Result{Content: new("Here goes the bbox call: \n Now the stock price call: \n  Now another bbox call: \n  See? I'm a helpful assistant."),
			ToolCalls: []ToolCall{call("find_bbox", granite4Bbox),
				call("get_stock_price", `{"symbol": "AAPL", "start_date": "2021-01-01", "end_date": "2021-12-31"}`),
				call("find_bbox", granite4Bbox)}, FinishReason: "tool_calls"}},
	{"parallel calls/parallel_tool_calls false", `{"parallel_tool_calls":false,"tools":[{"type":"function","function":{"name":"a"}}]}`,
		`<tool_call>{"name": "a", "arguments": {}}</tool_call><tool_call>{"name": "b", "arguments": {}}</tool_call>`,
		Result{ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
	{"call after whitespace", weatherTools, "\n\n<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>\n",
		Result{ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
	{"malformed/null arguments", weatherTools, `x<tool_call>{"name": "a", "arguments": null}</tool_call>y`,
		Result{Content: new(`x<tool_call>{"name": "a", "arguments": null}</tool_call>y`), FinishReason: "stop"}},
	{"malformed/two opens", weatherTools, `<tool_call>{"name": "a", "arguments": {}}<tool_call></tool_call>`,
		Result{Content: new(`<tool_call>{"name": "a", "arguments": {}}<tool_call></tool_call>`), FinishReason: "stop"}},
	{"malformed/close without open", weatherTools, `a</tool_call><tool_call>{"name": "a", "arguments": {}}</tool_call>`,
		Result{Content: new(`a</tool_call><tool_call>{"name": "a", "arguments": {}}</tool_call>`), FinishReason: "stop"}},
	{"malformed/later call breaks all", weatherTools, `t<tool_call>{"name": "a", "arguments": {}}</tool_call>u<tool_call>[1]</tool_call>`,
		Result{Content: new(`t<tool_call>{"name": "a", "arguments": {}}</tool_call>u<tool_call>[1]</tool_call>`), FinishReason: "stop"}},
	{"malformed/empty body", weatherTools, `<tool_call></tool_call>`, Result{Content: new(`<tool_call></tool_call>`), FinishReason: "stop"}},
	{"malformed/missing arguments", weatherTools, `<tool_call>{"name": "a"}</tool_call>`, Result{Content: new(`<tool_call>{"name": "a"}</tool_call>`), FinishReason: "stop"}},
	{"malformed/text after object", weatherTools, `<tool_call>{"name": "a", "arguments": {}} x</tool_call>`,
		Result{Content: new(`<tool_call>{"name": "a", "arguments": {}} x</tool_call>`), FinishReason: "stop"}},
	{"truncated/unclosed call", weatherTools, `<tool_call>{"name": "a", "arguments": {}}`,
		Result{Content: new(`<tool_call>{"name": "a", "arguments": {}}`), FinishReason: "stop"}},
	{"unicode", weatherTools, "東京 <tool_call>{\"name\": \"s\", \"arguments\": {\"q\": \"\\ud83d\\ude00\"}}</tool_call> é",
		Result{Content: new("東京  é"), ToolCalls: []ToolCall{call("s", `{"q": "😀"}`)}, FinishReason: "tool_calls"}},
	{"tool_choice/none", `{"tool_choice":"none","tools":[{"type":"function","function":{"name":"a"}}]}`, `<tool_call>{"name": "a", "arguments": {}}</tool_call>`,
		Result{Content: new(`<tool_call>{"name": "a", "arguments": {}}</tool_call>`), FinishReason: "stop"}},
}

func TestGranite4Cases(t *testing.T) { runToolCases(t, granite4Only, 41, granite4Cases) }

func TestGranite4StreamsEarly(t *testing.T) {
	p, err := New(granite4Only, testVocab, mustRequest(t, weatherTools), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := pushDelta(p, "Sure! <tool"); d.Content != "Sure! " {
		t.Fatalf("content before the first call held back: %+v", d)
	}
	d := pushDelta(p, `_call>{"name": "get_weather", "arguments": {"city": "To`)
	if len(d.ToolCalls) != 1 || d.ToolCalls[0].Name != "get_weather" || d.ToolCalls[0].Arguments != `{"city": "To` {
		t.Fatalf("call not streamed: %+v", d)
	}
}

func TestGranite4HugeArguments(t *testing.T) {
	long := strings.Repeat(`lorem <tool> \"dolor\" `, 20000)
	text := `<tool_call>{"name": "w", "arguments": {"text": "` + long + `"}}</tool_call>`
	got, _ := runSplits(t, granite4Only, mustRequest(t, weatherTools), text, []int{100, 5000, 70000})
	if len(got.ToolCalls) != 1 || got.ToolCalls[0].Arguments != `{"text": "`+long+`"}` {
		t.Fatal("huge arguments not re-serialised exactly")
	}
}

var granite4FuzzPieces = []string{"<tool_call>", "</tool_call>", "<tool_", " ", "\n", "[", "]", "{", "}", `"name"`, `"arguments"`,
	": ", ", ", `"a"`, "1", "text", "null", `"東京"`}

func FuzzGranite4(f *testing.F) {
	f.Add([]byte{15, 0, 7, 9, 11, 13, 12, 10, 11, 7, 8, 8, 1, 15}, uint64(1))
	f.Add([]byte{0, 1, 1}, uint64(2))
	f.Fuzz(func(t *testing.T, recipe []byte, seed uint64) {
		fuzzToolParser(t, granite4Only, granite4FuzzPieces, []string{"<tool_call>", "</tool_call>"}, recipe, seed)
	})
}
