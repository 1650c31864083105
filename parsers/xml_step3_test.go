package parsers

import (
	"strings"
	"testing"
)

var step3Only = Config{ToolParser: "step3", EnableAutoToolChoice: true}

const step3Tools = `{"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{
"city":{"type":"string"},"days":{"type":"integer"},"temp":{"type":"number"},"metric":{"type":"boolean"},"x":{"type":"null"},
"obj":{"type":"object"}}}}}]}`

// s3Call builds one call of the Step3 format.
func s3Call(name string, params ...string) string {
	var b strings.Builder
	b.WriteString(s3CallBegin + "function" + s3Sep + `<steptml:invoke name="` + name + `">`)
	for i := 0; i+1 < len(params); i += 2 {
		b.WriteString(`<steptml:parameter name="` + params[i] + `">` + params[i+1] + s3ParamEnd)
	}
	b.WriteString("</steptml:invoke>" + s3CallEnd)
	return b.String()
}

// step3Cases: the "vllm/" outputs are those of vLLM's
// tests/tool_parsers/test_step3_tool_parser.py; they carry no tool_sep
// with "function", so vLLM's non-streaming parser finds no calls (the test
// marks them xfail "non-streaming has bugs") and returns them unchanged.
// The rest follow the parser's code for the format the model emits.
var step3Cases = []toolCase{
	{"vllm/no tool calls", step3Tools, "This is a regular response without any tool calls.",
		Result{Content: new("This is a regular response without any tool calls."), FinishReason: "stop"}},
	{"vllm/single call without tool_sep", step3Tools, s3CallsBegin + s3CallBegin + `<steptml:invoke name="get_weather"><steptml:parameter name="city">Tokyo</steptml:parameter></steptml:invoke>` + s3CallEnd + s3CallsEnd,
		Result{Content: new(s3CallsBegin + s3CallBegin + `<steptml:invoke name="get_weather"><steptml:parameter name="city">Tokyo</steptml:parameter></steptml:invoke>` + s3CallEnd + s3CallsEnd), FinishReason: "stop"}},
	{"vllm/malformed/truncated", step3Tools, s3CallsBegin + s3CallBegin + `<steptml:invoke name="func">`,
		Result{Content: new(s3CallsBegin + s3CallBegin + `<steptml:invoke name="func">`), FinishReason: "stop"}},
	{"single call", step3Tools, s3CallsBegin + s3Call("get_weather", "city", " Tokyo ", "days", "3") + s3CallsEnd,
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Tokyo", "days": 3}`)}, FinishReason: "tool_calls"}},
	{"parallel calls", step3Tools, s3CallsBegin + s3Call("get_weather", "city", "Tokyo") + "\n" + s3Call("get_time", "timezone", "Asia/Tokyo") + s3CallsEnd,
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Tokyo"}`), call("get_time", `{"timezone": "Asia/Tokyo"}`)}, FinishReason: "tool_calls"}},
	{"schema casts", step3Tools, s3CallsBegin + s3Call("get_weather", "days", "1_000", "temp", "3", "metric", "TRUE", "x", "Null", "obj", `{"a": 1}`, "other", "7") + s3CallsEnd,
		Result{ToolCalls: []ToolCall{call("get_weather", `{"days": 1000, "temp": 3.0, "metric": true, "x": null, "obj": "{\"a\": 1}", "other": "7"}`)}, FinishReason: "tool_calls"}},
	{"failed casts stay strings", step3Tools, s3CallsBegin + s3Call("get_weather", "days", "1.5", "temp", "hot", "metric", "yes", "x", "none") + s3CallsEnd,
		Result{ToolCalls: []ToolCall{call("get_weather", `{"days": "1.5", "temp": "hot", "metric": "yes", "x": "none"}`)}, FinishReason: "tool_calls"}},
	{"float forms", step3Tools, s3CallsBegin + s3Call("get_weather", "temp", "-inf") + s3Call("get_weather", "temp", "1e400") + s3Call("get_weather", "temp", ".5e-7") + s3CallsEnd,
		Result{ToolCalls: []ToolCall{call("get_weather", `{"temp": -Infinity}`), call("get_weather", `{"temp": Infinity}`), call("get_weather", `{"temp": 5e-08}`)}, FinishReason: "tool_calls"}},
	{"repeated parameter keeps first place, last value", step3Tools, s3CallsBegin + s3Call("f", "a", "1", "b", "2", "a", "3") + s3CallsEnd,
		Result{ToolCalls: []ToolCall{call("f", `{"a": "3", "b": "2"}`)}, FinishReason: "tool_calls"}},
	{"value with < is not a parameter", step3Tools, s3CallsBegin + s3Call("f", "a", "x<y", "b", "ok") + s3CallsEnd,
		Result{ToolCalls: []ToolCall{call("f", `{"b": "ok"}`)}, FinishReason: "tool_calls"}},
	{"empty arguments", step3Tools, s3CallsBegin + s3Call("refresh") + s3CallsEnd,
		Result{ToolCalls: []ToolCall{call("refresh", `{}`)}, FinishReason: "tool_calls"}},
	{"surrounding text stripped and joined", step3Tools, "Let me check.\n\n" + s3CallsBegin + s3Call("get_weather", "city", "東京") + s3CallsEnd + "\n\nI'll get that.\n",
		Result{Content: new("Let me check.\n\n\n\nI'll get that."), ToolCalls: []ToolCall{call("get_weather", `{"city": "東京"}`)}, FinishReason: "tool_calls"}},
	{"leading space stripped with calls", step3Tools, "\n\n Hi " + s3CallsBegin + s3Call("f") + s3CallsEnd + " \n",
		Result{Content: new("Hi"), ToolCalls: []ToolCall{call("f", `{}`)}, FinishReason: "tool_calls"}},
	{"leading space kept without calls", step3Tools, "\n\n Hi " + s3CallsBegin + s3Call("f"),
		Result{Content: new("\n\n Hi " + s3CallsBegin + s3Call("f")), FinishReason: "stop"}},
	{"only text after the block", step3Tools, s3CallsBegin + s3Call("f") + s3CallsEnd + "  done  ",
		Result{Content: new("done"), ToolCalls: []ToolCall{call("f", `{}`)}, FinishReason: "tool_calls"}},
	{"part without function type skipped", step3Tools, s3CallsBegin + s3CallBegin + "tool" + s3Sep + `<steptml:invoke name="x">` + s3CallEnd + s3Call("y") + s3CallsEnd,
		Result{ToolCalls: []ToolCall{call("y", `{}`)}, FinishReason: "tool_calls"}},
	{"text before first call-begin in the block can be a call", step3Tools, s3CallsBegin + " function" + s3Sep + `<steptml:invoke name="z">` + s3CallEnd + s3CallsEnd,
		Result{ToolCalls: []ToolCall{call("z", `{}`)}, FinishReason: "tool_calls"}},
	{"no valid call: unchanged", step3Tools, "a " + s3CallsBegin + s3CallBegin + "function" + s3Sep + `<steptml:invoke name="">` + s3CallEnd + s3CallsEnd + " b",
		Result{Content: new("a " + s3CallsBegin + s3CallBegin + "function" + s3Sep + `<steptml:invoke name="">` + s3CallEnd + s3CallsEnd + " b"), FinishReason: "stop"}},
	{"second block is text", step3Tools, s3CallsBegin + s3Call("f") + s3CallsEnd + "x" + s3CallsBegin + s3Call("g") + s3CallsEnd,
		Result{Content: new("x" + s3CallsBegin + s3Call("g") + s3CallsEnd), ToolCalls: []ToolCall{call("f", `{}`)}, FinishReason: "tool_calls"}},
	{"ideographic space is stripped", step3Tools, "ok\u3000" + s3CallsBegin + s3Call("f") + s3CallsEnd + "\u3000",
		Result{Content: new("ok"), ToolCalls: []ToolCall{call("f", `{}`)}, FinishReason: "tool_calls"}},
}

func TestStep3Cases(t *testing.T) { runToolCases(t, step3Only, 25, step3Cases) }

func TestStep3StreamsText(t *testing.T) {
	p, err := New(step3Only, testVocab, mustRequest(t, step3Tools), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := pushDelta(p, "Checking now. <｜tool"); d.Content != "Checking now." {
		t.Fatalf("text before the block not streamed: %+v", d)
	}
	if d := pushDelta(p, "_calls_begin｜>"+s3Call("f", "a", "1")+s3CallsEnd+" Done."); len(d.ToolCalls) != 1 || d.Content != "  Done." {
		t.Fatalf("calls or text after the block not streamed: %+v", d)
	}
}

var step3FuzzPieces = []string{s3CallsBegin, s3CallsEnd, s3CallBegin, s3CallEnd, s3Sep, "function", `<steptml:invoke name="f">`,
	`<steptml:parameter name="days">`, `<steptml:parameter name="city">`, s3ParamEnd, "</steptml:invoke>", "1", " ", "\n", "x", "<｜tool", "\u3000", "東"}

func FuzzStep3(f *testing.F) {
	f.Add([]byte{14, 0, 2, 5, 4, 6, 7, 11, 9, 10, 3, 1, 13, 14}, uint64(1))
	f.Add([]byte{12, 14, 0, 2, 5, 4, 6, 3, 1, 12}, uint64(2))
	f.Fuzz(func(t *testing.T, recipe []byte, seed uint64) {
		text, ok := fuzzText(recipe, step3FuzzPieces)
		if !ok {
			return
		}
		batch, acc := streamAgrees(t, step3Only, mustRequest(t, step3Tools), text, fuzzCuts(text, seed))
		if c := acc.Content(); len(batch.ToolCalls) > 0 && strings.Count(c, s3CallsBegin) >= strings.Count(text, s3CallsBegin) {
			t.Fatalf("%q: the call block leaked as content %q", text, c)
		}
	})
}
