package parsers

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

var mmOnly = Config{ToolParser: "minimax_m2", EnableAutoToolChoice: true}

const mmTools = `{"tools":[
 {"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}}}}},
 {"type":"function","function":{"name":"update_profile","parameters":{"type":"object","properties":{"nickname":{"anyOf":[{"type":"string"},{"type":"null"}]}}}}},
 {"type":"function","function":{"name":"update_settings","parameters":{"type":"object","properties":{"config":{"anyOf":[{"type":"object"},{"type":"null"}]}}}}},
 {"type":"function","function":{"name":"set_theme","parameters":{"type":"object","properties":{"theme":{"type":"string","enum":["dark","light","none"]}}}}},
 {"type":"function","function":{"name":"echo","parameters":{"type":"object","properties":{"message":{"type":"string"}}}}}]}`

// mmInvoke builds one invoke block.
func mmInvoke(name string, params ...string) string {
	var b strings.Builder
	b.WriteString(`<invoke name="` + name + `">`)
	for i := 0; i+1 < len(params); i += 2 {
		b.WriteString(`<parameter name="` + params[i] + `">` + params[i+1] + "</parameter>")
	}
	b.WriteString("</invoke>")
	return b.String()
}

// mmCases: the "vllm/" cases are vLLM's
// tests/tool_parsers/test_minimax_m2_tool_parser.py outputs with its
// expectations (its parser has no tools unless the test gives some: `{}`
// here); the rest follow the minimax_m2 grammar and the engine's rules.
var mmCases = []toolCase{
	{"vllm/plain content", `{}`, "Hello world", Result{Content: new("Hello world"), FinishReason: "stop"}},
	{"vllm/content before tool call", `{}`, "Let me check. <minimax:tool_call>" + mmInvoke("get_weather", "city", "Seattle") + "</minimax:tool_call>",
		Result{Content: new("Let me check."), FinishReason: "stop"}},
	{"vllm/single invoke", weatherTools, "<minimax:tool_call>" + mmInvoke("get_weather", "city", "Seattle") + "</minimax:tool_call>",
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Seattle"}`)}, FinishReason: "tool_calls"}},
	{"vllm/multiple params stay strings without a schema", `{"tools":[{"type":"function","function":{"name":"get_weather"}}]}`,
		"<minimax:tool_call>" + mmInvoke("get_weather", "city", "Seattle", "days", "5") + "</minimax:tool_call>",
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Seattle", "days": "5"}`)}, FinishReason: "tool_calls"}},
	{"vllm/two invokes", `{"tools":[{"type":"function","function":{"name":"search_web"}}]}`,
		"<minimax:tool_call>" + mmInvoke("search_web", "query", "OpenAI") + mmInvoke("search_web", "query", "Gemini") + "</minimax:tool_call>",
		Result{ToolCalls: []ToolCall{call("search_web", `{"query": "OpenAI"}`), call("search_web", `{"query": "Gemini"}`)}, FinishReason: "tool_calls"}},
	{"vllm/anyOf nullable keeps a string", mmTools, "<minimax:tool_call>" + mmInvoke("update_profile", "nickname", "Alice") + "</minimax:tool_call>",
		Result{ToolCalls: []ToolCall{call("update_profile", `{"nickname": "Alice"}`)}, FinishReason: "tool_calls"}},
	{"vllm/anyOf nullable null", mmTools, "<minimax:tool_call>" + mmInvoke("update_profile", "nickname", "null") + "</minimax:tool_call>",
		Result{ToolCalls: []ToolCall{call("update_profile", `{"nickname": null}`)}, FinishReason: "tool_calls"}},
	{"vllm/anyOf object", mmTools, "<minimax:tool_call>" + mmInvoke("update_settings", "config", `{"theme": "dark", "fontSize": 14}`) + "</minimax:tool_call>",
		Result{ToolCalls: []ToolCall{call("update_settings", `{"config": {"theme": "dark", "fontSize": 14}}`)}, FinishReason: "tool_calls"}},
	{"vllm/none string in enum", mmTools, "<minimax:tool_call>" + mmInvoke("set_theme", "theme", "none") + "</minimax:tool_call>",
		Result{ToolCalls: []ToolCall{call("set_theme", `{"theme": "none"}`)}, FinishReason: "tool_calls"}},
	{"vllm/nil string", mmTools, "<minimax:tool_call>" + mmInvoke("echo", "message", "nil") + "</minimax:tool_call>",
		Result{ToolCalls: []ToolCall{call("echo", `{"message": "nil"}`)}, FinishReason: "tool_calls"}},
	{"vllm/whitespace preserved", `{}`, "<minimax:tool_call>" + mmInvoke("write", "content", "    def foo():\n        return 1\n") + "</minimax:tool_call>",
		Result{FinishReason: "stop"}},
	{"whitespace preserved with tools", `{"tools":[{"type":"function","function":{"name":"write"}}]}`, "<minimax:tool_call>" + mmInvoke("write", "content", " hi ") + "</minimax:tool_call>",
		Result{ToolCalls: []ToolCall{call("write", `{"content": " hi "}`)}, FinishReason: "tool_calls"}},
	{"schema integer", mmTools, "<minimax:tool_call>" + mmInvoke("get_weather", "city", "Oslo", "days", " 3 ") + "</minimax:tool_call>",
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Oslo", "days": 3}`)}, FinishReason: "tool_calls"}},
	{"unknown tool is not a call", mmTools, "Hi <minimax:tool_call>" + mmInvoke("nope", "a", "1") + "</minimax:tool_call> there",
		Result{Content: new("Hi <minimax:tool_call>" + mmInvoke("nope", "a", "1") + "</minimax:tool_call> there"), FinishReason: "stop"}},
	{"unknown tool next to a known one", mmTools, "<minimax:tool_call>" + mmInvoke("nope") + mmInvoke("echo", "message", "x") + "</minimax:tool_call>",
		Result{ToolCalls: []ToolCall{call("echo", `{"message": "x"}`)}, FinishReason: "tool_calls"}},
	{"quote forms", mmTools, "<invoke name='echo'><parameter name='message'>a</parameter></invoke><invoke name=echo>< parameter  name = message >b<parameter name=\"x\">c</parameter></invoke>",
		Result{ToolCalls: []ToolCall{call("echo", `{"message": "a"}`), call("echo", `{"message": "b", "x": "c"}`)}, FinishReason: "tool_calls"}},
	{"text around and between dropped, think end dropped", mmTools, " Sure</think> thing \n<minimax:tool_call>junk" + mmInvoke("echo") + "between" + mmInvoke("echo") + "</minimax:tool_call> after",
		Result{Content: new("Sure thing"), ToolCalls: []ToolCall{call("echo", `{}`), call("echo", `{}`)}, FinishReason: "tool_calls"}},
	{"value open at the end is dropped", mmTools, `<invoke name="echo"><parameter name="message">par`,
		Result{ToolCalls: []ToolCall{call("echo", `{}`)}, FinishReason: "tool_calls"}},
	{"value ends before the next opening tag", mmTools, `<invoke name="get_weather"><parameter name="city">A<parameter name="days">2</parameter></invoke>`,
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "A", "days": 2}`)}, FinishReason: "tool_calls"}},
	{"truncated name", mmTools, `<minimax:tool_call><invoke name="ec`, Result{Content: new(`<minimax:tool_call><invoke name="ec`), FinishReason: "stop"}},
	{"truncated known name", mmTools, `<minimax:tool_call><invoke name="echo`, Result{ToolCalls: []ToolCall{call("echo", `{}`)}, FinishReason: "tool_calls"}},
	{"bare prefix at the end", mmTools, `x <invoke name=`, Result{Content: new(`x <invoke name=`), FinishReason: "stop"}},
	{"terminal inside a name", `{}`, `<invoke name="a</invoke>b">`, Result{FinishReason: "stop"}},
	{"terminal inside a name with tools", `{"tools":[{"type":"function","function":{"name":"a</invoke>b"}}]}`, `<invoke name="a</invoke>b"><parameter name="k">v</parameter>`,
		Result{ToolCalls: []ToolCall{call("a</invoke>b", `{"k": "v"}`)}, FinishReason: "tool_calls"}},
	{"quoted name falls back to bare", mmTools, `<invoke name="echo"><parameter name="a"b>1</parameter></invoke>`,
		Result{ToolCalls: []ToolCall{call("echo", `{"\"a\"b": "1"}`)}, FinishReason: "tool_calls"}},
	{"blank parameter name skipped", mmTools, `<invoke name="echo"><parameter name=" ">1</parameter><parameter name="message">2</parameter></invoke>`,
		Result{ToolCalls: []ToolCall{call("echo", `{"message": "2"}`)}, FinishReason: "tool_calls"}},
	{"parallel_tool_calls false", `{"parallel_tool_calls":false,"tools":[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"b"}}]}`,
		mmInvoke("a") + mmInvoke("b"), Result{ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
	{"tool_choice none keeps content outside calls", `{"tool_choice":"none","tools":[{"type":"function","function":{"name":"a"}}]}`,
		"A<minimax:tool_call>" + mmInvoke("a") + "</minimax:tool_call>B", Result{Content: new("AB"), FinishReason: "stop"}},
}

func TestMinimaxM2Cases(t *testing.T) { runToolCases(t, mmOnly, 31, mmCases) }

func TestMinimaxM2StreamsParameters(t *testing.T) {
	p, err := New(mmOnly, testVocab, mustRequest(t, mmTools), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := pushDelta(p, "Checking. <minimax:tool_call><invoke name=\"get_weather\">"); d.Content != "Checking." || len(d.ToolCalls) != 1 {
		t.Fatalf("content or name not streamed: %+v", d)
	}
	if d := pushDelta(p, `<parameter name="city">Oslo</parameter><parameter name="days">`); len(d.ToolCalls) != 1 || d.ToolCalls[0].Arguments != `{"city": "Oslo"` {
		t.Fatalf("completed parameter not streamed: %+v", d)
	}
}

var mmFuzzPieces = []string{mmToolStart, mmToolEnd, mmInvokeDQ, mmInvokeSQ, mmInvokeBare, mmInvokeEnd, mmNameEndDQ, mmNameEndSQ, ">",
	mmParamStart, `"message"`, "message", mmParamEnd, "echo", "</think>", "<think>", " ", "\n", "x", `"`, "<", "東"}

func FuzzMinimaxM2(f *testing.F) {
	f.Add([]byte{0, 2, 13, 6, 9, 10, 8, 18, 12, 5, 1}, uint64(1))
	f.Add([]byte{18, 14, 4, 13, 8, 9, 11, 8, 20, 16}, uint64(2))
	f.Fuzz(func(t *testing.T, recipe []byte, seed uint64) {
		text, ok := fuzzText(recipe, mmFuzzPieces)
		if !ok {
			return
		}
		for _, req := range []string{mmTools, `{}`} {
			batch, acc := streamAgrees(t, mmOnly, mustRequest(t, req), text, fuzzCuts(text, seed))
			if len(batch.ToolCalls) > 0 && strings.Contains(acc.Content(), mmToolStart) {
				t.Fatalf("%q: marker leaked as content %q", text, acc.Content())
			}
		}
	})
}

// TestMinimaxM2FirstByteFastPath checks the scan's shortcut for pushes
// without a marker's first byte against the full scan (a set holding
// every byte never takes it), over random texts of marker pieces and
// prose in random pushes.
func TestMinimaxM2FirstByteFastPath(t *testing.T) {
	req := mustRequest(t, mmTools)
	pieces := []string{"<minimax:tool_call>", "</minimax:tool_call>", `<invoke name="`, "get_weather", `">`, "\n",
		`<parameter name="`, "city", "Paris", "</parameter>", "</invoke>", "<think>", "</think>", "<", ">", `"`, "'",
		"x < y", " some prose", "  ", "<invoke name=", "param", "eter"}
	var all byteSet
	for i := range all {
		all[i] = true
	}
	rng := rand.New(rand.NewPCG(7, 9))
	for range 300 {
		var b strings.Builder
		for range 1 + rng.IntN(30) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		text := b.String()
		var cuts []int
		for i := 0; i < len(text); {
			i = min(i+1+rng.IntN(6), len(text))
			cuts = append(cuts, i)
		}
		run := func(full bool) (string, []ToolCallDelta) {
			tm, err := newMinimaxM2(testVocab, req)
			if err != nil {
				t.Fatal(err)
			}
			m := tm.(*minimaxM2)
			if full {
				m.first = &all
			}
			var out strings.Builder
			var calls []ToolCallDelta
			prev := 0
			for _, cut := range cuts {
				c, cs := m.Push(text[prev:cut])
				out.WriteString(c)
				calls = append(calls, cs...)
				prev = cut
			}
			c, cs := m.Finish()
			out.WriteString(c)
			for i := range calls {
				calls[i].ID = ""
			}
			for i := range cs {
				cs[i].ID = ""
			}
			return out.String(), append(calls, cs...)
		}
		gotC, gotCalls := run(false)
		wantC, wantCalls := run(true)
		if gotC != wantC || !reflect.DeepEqual(joinArgs(gotCalls), joinArgs(wantCalls)) {
			t.Fatalf("%q: fast %q %v, full %q %v", text, gotC, gotCalls, wantC, wantCalls)
		}
	}
}

// joinArgs is each call's name and concatenated arguments.
func joinArgs(calls []ToolCallDelta) map[int]string {
	m := map[int]string{}
	for _, c := range calls {
		m[c.Index] += c.Name + "|" + c.Arguments
	}
	return m
}
