package parsers

import (
	"strings"
	"testing"
)

var xlamOnly = Config{ToolParser: "xlam", EnableAutoToolChoice: true}

const xlDallas = `[{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}}]`

var xlDallasCall = call("get_current_weather", `{"city": "Dallas", "state": "TX", "unit": "fahrenheit"}`)

// xlamCases: the "vllm/" cases are vLLM's tests/tool_parsers/test_xlam_tool_parser.py
// extract cases with their expectations; the rest follow the parser's code.
var xlamCases = []toolCase{
	{"vllm/no tools", weatherTools, "This is a test", Result{Content: new("This is a test"), FinishReason: "stop"}},
	{"vllm/parallel calls", weatherTools, `[{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}}, {"name": "get_current_weather", "arguments": {"city": "Orlando", "state": "FL", "unit": "fahrenheit"}}]`,
		Result{ToolCalls: []ToolCall{xlDallasCall, call("get_current_weather", `{"city": "Orlando", "state": "FL", "unit": "fahrenheit"}`)}, FinishReason: "tool_calls"}},
	{"vllm/think tag", weatherTools, "<think>I'll help you with that.</think>" + xlDallas,
		Result{Content: new("<think>I'll help you with that.</think>"), ToolCalls: []ToolCall{xlDallasCall}, FinishReason: "tool_calls"}},
	{"vllm/json code block", weatherTools, "I'll help you with that.\n```json\n" + xlDallas + "\n```",
		Result{Content: new("I'll help you with that."), ToolCalls: []ToolCall{xlDallasCall}, FinishReason: "tool_calls"}},
	{"vllm/TOOL_CALLS tag", weatherTools, "I'll check the weather for you.[TOOL_CALLS]" + xlDallas,
		Result{Content: new("I'll check the weather for you."), ToolCalls: []ToolCall{xlDallasCall}, FinishReason: "tool_calls"}},
	{"vllm/tool_call tags", weatherTools, "I'll help you check the weather.<tool_call>" + xlDallas + "</tool_call>",
		Result{Content: new("I'll help you check the weather."), ToolCalls: []ToolCall{xlDallasCall}, FinishReason: "tool_calls"}},
	{"vllm/list structure", weatherTools, `[{"name": "get_current_weather", "arguments": {"city": "Seattle", "state": "WA", "unit": "celsius"}}]`,
		Result{ToolCalls: []ToolCall{call("get_current_weather", `{"city": "Seattle", "state": "WA", "unit": "celsius"}`)}, FinishReason: "tool_calls"}},
	{"text after a fence kept, all fences removed", weatherTools, "Sure. ```oops``` then ```json\n" + xlDallas + "\n``` done \n",
		Result{Content: new("Sure.  then  done"), ToolCalls: []ToolCall{xlDallasCall}, FinishReason: "tool_calls"}},
	{"TOOL_CALLS runs to the end of the line", weatherTools, "A[TOOL_CALLS]" + xlDallas + "\nB[TOOL_CALLS]x",
		Result{Content: new("A\nB"), ToolCalls: []ToolCall{xlDallasCall}, FinishReason: "tool_calls"}},
	{"think path drops text after", weatherTools, "  plan </think> \n" + xlDallas + "\n",
		Result{Content: new("plan </think>"), ToolCalls: []ToolCall{xlDallasCall}, FinishReason: "tool_calls"}},
	{"think path needs the whole rest to be JSON", weatherTools, "  plan </think> \n" + xlDallas + "\nmore",
		Result{Content: new("  plan </think> \n" + xlDallas + "\nmore"), FinishReason: "stop"}},
	{"think path finds a fence after text", weatherTools, "plan</think>Calling:\n```\n" + xlDallas + "```\nbye",
		Result{Content: new("plan</think>"), ToolCalls: []ToolCall{xlDallasCall}, FinishReason: "tool_calls"}},
	{"think path without JSON falls back to fences", weatherTools, "a ```" + xlDallas + "``` b</think>no json",
		Result{Content: new("a  b</think>no json"), ToolCalls: []ToolCall{xlDallasCall}, FinishReason: "tool_calls"}},
	{"string arguments taken as is", weatherTools, `[{"name": "f", "arguments": "{\"a\":1}"}]`,
		Result{ToolCalls: []ToolCall{call("f", `{"a":1}`)}, FinishReason: "tool_calls"}},
	{"bad elements skipped", weatherTools, `[1, {"name": "a"}, {"name": "b", "arguments": {"é": 1.0}}]`,
		Result{ToolCalls: []ToolCall{call("b", `{"é": 1.0}`)}, FinishReason: "tool_calls"}},
	{"number arguments void all", weatherTools, `Hi <tool_call>[{"name": "b", "arguments": {}}, {"name": "a", "arguments": 3}]</tool_call>`,
		Result{Content: new(`Hi <tool_call>[{"name": "b", "arguments": {}}, {"name": "a", "arguments": 3}]</tool_call>`), FinishReason: "stop"}},
	{"not a list", weatherTools, `x <tool_call>{"name": "a", "arguments": {}}</tool_call>`,
		Result{Content: new(`x <tool_call>{"name": "a", "arguments": {}}</tool_call>`), FinishReason: "stop"}},
	{"invalid list heuristic", weatherTools, `[{"name": "a", "arguments": {`, Result{Content: new(`[{"name": "a", "arguments": {`), FinishReason: "stop"}},
	{"leading space held then kept", weatherTools, "\n Hello", Result{Content: new("\n Hello"), FinishReason: "stop"}},
	{"leading space stripped with calls", weatherTools, "\n Hello <tool_call>" + xlDallas + "</tool_call>",
		Result{Content: new("Hello"), ToolCalls: []ToolCall{xlDallasCall}, FinishReason: "tool_calls"}},
	{"only a call: null content", weatherTools, " ```json " + xlDallas + " ``` ", Result{ToolCalls: []ToolCall{xlDallasCall}, FinishReason: "tool_calls"}},
	{"ideographic space trailing", weatherTools, "ok\u3000<tool_call>" + xlDallas + "</tool_call>\u3000",
		Result{Content: new("ok"), ToolCalls: []ToolCall{xlDallasCall}, FinishReason: "tool_calls"}},
	{"parallel_tool_calls false", `{"parallel_tool_calls":false,"tools":[{"type":"function","function":{"name":"a"}}]}`,
		`[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]`, Result{ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
}

func TestXLAMCases(t *testing.T) { runToolCases(t, xlamOnly, 33, xlamCases) }

func TestXLAMStreamsLeadingText(t *testing.T) {
	p, err := New(xlamOnly, testVocab, mustRequest(t, weatherTools), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := pushDelta(p, "Let me check. ``"); d.Content != "Let me check." {
		t.Fatalf("text before a trigger not streamed: %+v", d)
	}
}

var xlamFuzzPieces = []string{xlFence, "json", xlToolCalls, xlToolOpen, xlToolClose, xlThinkEnd, "[", "]", "{", "}", `"name"`, `"arguments"`,
	": ", ", ", `"a"`, "1", " ", "\n", "x", "\u3000", "`"}

func FuzzXLAM(f *testing.F) {
	f.Add([]byte{18, 0, 1, 6, 8, 10, 12, 14, 13, 11, 12, 8, 9, 9, 7, 0, 16}, uint64(1))
	f.Add([]byte{17, 18, 5, 6, 7, 2, 6, 7}, uint64(2))
	f.Fuzz(func(t *testing.T, recipe []byte, seed uint64) {
		text, ok := fuzzText(recipe, xlamFuzzPieces)
		if !ok {
			return
		}
		batch, _ := streamAgrees(t, xlamOnly, mustRequest(t, weatherTools), text, fuzzCuts(text, seed))
		// With calls, the list and what wraps it never stay in content.
		if len(batch.ToolCalls) > 0 && batch.Content != nil && len(*batch.Content) >= len(strings.TrimSpace(text)) {
			t.Fatalf("%q: calls left in content %q", text, *batch.Content)
		}
	})
}
