package parsers

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

var (
	qcOnly  = Config{ToolParser: "qwen3_coder", EnableAutoToolChoice: true}
	qcQwen3 = Config{ReasoningParser: "qwen3", ToolParser: "qwen3_coder", EnableAutoToolChoice: true}
	qxOnly  = Config{ToolParser: "qwen3_xml", EnableAutoToolChoice: true}
	qcR1    = Config{ReasoningParser: "deepseek_r1", ToolParser: "qwen3_coder", EnableAutoToolChoice: true}
)

// qcTools mirrors the schemas of vLLM's qwen3coder and Rust parser tests.
const qcTools = `{"tools":[
 {"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{
   "city":{"type":"string"},"date":{"type":"string"},"days":{"type":"integer"},"unit":{"type":"string","enum":["c","f"]}}}}},
 {"type":"function","function":{"name":"convert","parameters":{"type":"object","properties":{
   "whole":{"type":"number"},"flag":{"type":"boolean"},"payload":{"type":"object"},"items":{"type":"array"},
   "empty":{"type":"string"},"maybe":{"anyOf":[{"type":"string"},{"type":"null"}]},"count":{"type":"int"},
   "level":{"enum":[1,2,3]},"ratio":{"type":["number","string"]},"any":{"type":"weird"}}}}},
 {"type":"function","function":{"name":"calculate_area","parameters":{"type":"object","properties":{
   "shape":{"type":"string"},"dimensions":{"type":"object"},"precision":{"type":"integer"}}}}},
 {"type":"function","function":{"name":"get_time"}}]}`

// qcBuild builds a call the way Qwen3-Coder's chat template writes one.
func qcBuild(name string, params ...string) string {
	var b strings.Builder
	b.WriteString("<tool_call>\n<function=" + name + ">\n")
	for i := 0; i+1 < len(params); i += 2 {
		b.WriteString("<parameter=" + params[i] + ">\n" + params[i+1] + "\n</parameter>\n")
	}
	b.WriteString("</function>\n</tool_call>")
	return b.String()
}

var qwen3CoderCases = []struct {
	name string
	cfg  Config
	req  string
	text string
	want Result
}{
	{"plain text", qcOnly, qcTools, "Hello, world!", Result{Content: new("Hello, world!"), FinishReason: "stop"}},
	{"plain text/leading and trailing whitespace kept", qcOnly, qcTools, "\n\nHi there \n",
		Result{Content: new("\n\nHi there \n"), FinishReason: "stop"}},
	{"plain text/think tags kept without calls", qcOnly, qcTools, "<think>\nhm\n</think>\n\nAnswer.",
		Result{Content: new("<think>\nhm\n</think>\n\nAnswer."), FinishReason: "stop"}},
	{"single call", qcOnly, qcTools, qcBuild("get_weather", "city", "SF", "date", "2026-04-29"),
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "SF", "date": "2026-04-29"}`)}, FinishReason: "tool_calls"}},
	{"single call/qwen3_xml is the same parser", qxOnly, qcTools, qcBuild("get_weather", "city", "SF"),
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "SF"}`)}, FinishReason: "tool_calls"}},
	{"single call/no parameters", qcOnly, qcTools, "<tool_call>\n<function=get_time>\n</function>\n</tool_call>",
		Result{ToolCalls: []ToolCall{call("get_time", `{}`)}, FinishReason: "tool_calls"}},
	{"single call/unknown tool and parameter kept as strings", qcOnly, qcTools, qcBuild("nope", "days", "3"),
		Result{ToolCalls: []ToolCall{call("nope", `{"days": "3"}`)}, FinishReason: "tool_calls"}},
	{"call after text/stripped, think end dropped", qcOnly, qcTools, "<think>\nplan\n</think>\n\nI'll look. \n" + qcBuild("get_time"),
		Result{Content: new("<think>\nplan\n\n\nI'll look."), ToolCalls: []ToolCall{call("get_time", `{}`)}, FinishReason: "tool_calls"}},
	{"call after text/text between and after dropped", qcOnly, qcTools,
		"I'll check two cities." + qcBuild("get_weather", "city", "Dallas") + "Between calls." + qcBuild("get_weather", "city", "Orlando") + "Done.",
		Result{Content: new("I'll check two cities."), ToolCalls: []ToolCall{call("get_weather", `{"city": "Dallas"}`), call("get_weather", `{"city": "Orlando"}`)}, FinishReason: "tool_calls"}},
	{"call after whitespace", qcOnly, qcTools, "\n\n" + qcBuild("get_time"),
		Result{ToolCalls: []ToolCall{call("get_time", `{}`)}, FinishReason: "tool_calls"}},
	{"parallel calls/parallel_tool_calls false", qcOnly, `{"parallel_tool_calls":false,"tools":[{"type":"function","function":{"name":"a"}}]}`,
		qcBuild("a", "x", "1") + "\n" + qcBuild("b", "y", "2"),
		Result{ToolCalls: []ToolCall{call("a", `{"x": "1"}`)}, FinishReason: "tool_calls"}},
	{"schema/coercions", qcOnly, qcTools, qcBuild("convert", "whole", "5.0", "flag", "true", "payload", `{"nested":true}`, "items", "[1,2]", "empty", "42"),
		Result{ToolCalls: []ToolCall{call("convert", `{"whole": 5, "flag": true, "payload": {"nested": true}, "items": [1, 2], "empty": "42"}`)}, FinishReason: "tool_calls"}},
	{"schema/integer 3.0 stays a float", qcOnly, qcTools, qcBuild("get_weather", "days", "3.0"),
		Result{ToolCalls: []ToolCall{call("get_weather", `{"days": 3.0}`)}, FinishReason: "tool_calls"}},
	{"schema/python int forms", qcOnly, qcTools, qcBuild("convert", "count", " 1_000 ") + qcBuild("get_weather", "days", "007"),
		Result{ToolCalls: []ToolCall{call("convert", `{"count": 1000}`), call("get_weather", `{"days": 7}`)}, FinishReason: "tool_calls"}},
	{"schema/failed coercions", qcOnly, qcTools, qcBuild("convert", "whole", "1e400", "flag", "yes", "payload", "{'k': 'v'}", "count", "abc"),
		Result{ToolCalls: []ToolCall{call("convert", `{"whole": "1e400", "flag": "yes", "payload": "{'k': 'v'}", "count": "abc"}`)}, FinishReason: "tool_calls"}},
	{"schema/numbers", qcOnly, qcTools, qcBuild("convert", "whole", "1_000.5", "ratio", "0.00001", "level", "2", "any", `"q"`),
		Result{ToolCalls: []ToolCall{call("convert", `{"whole": 1000.5, "ratio": 1e-05, "level": 2, "any": "q"}`)}, FinishReason: "tool_calls"}},
	{"schema/nullable and bool forms", qcOnly, qcTools, qcBuild("convert", "maybe", "NULL", "flag", " FALSE ", "empty", "null"),
		Result{ToolCalls: []ToolCall{call("convert", `{"maybe": null, "flag": false, "empty": "null"}`)}, FinishReason: "tool_calls"}},
	{"schema/multiline typed params", qcOnly, qcTools,
		"<tool_call>\n<function=calculate_area>\n<parameter=shape>\nrectangle\n</parameter>\n<parameter=dimensions>\n{\"width\": 10,\n \"height\": 20}\n</parameter>\n<parameter=precision>\n2\n</parameter>\n</function>\n</tool_call>",
		Result{ToolCalls: []ToolCall{call("calculate_area", `{"shape": "rectangle", "dimensions": {"width": 10, "height": 20}, "precision": 2}`)}, FinishReason: "tool_calls"}},
	{"values/xml-like text kept", qcOnly, qcTools, qcBuild("p", "html", `<div class="test"><span>Hello</span></div>`),
		Result{ToolCalls: []ToolCall{call("p", `{"html": "<div class=\"test\"><span>Hello</span></div>"}`)}, FinishReason: "tool_calls"}},
	{"values/first closing tag ends the value", qcOnly, qcTools, "<tool_call>\n<function=search>\n<parameter=query>\na </parameter> b\n</parameter>\n</function>\n</tool_call>",
		Result{ToolCalls: []ToolCall{call("search", `{"query": "a "}`)}, FinishReason: "tool_calls"}},
	{"values/next opening tag ends the value", qcOnly, qcTools, "<function=f><parameter=a>1<parameter=b>2</parameter></function>",
		Result{ToolCalls: []ToolCall{call("f", `{"a": "1", "b": "2"}`)}, FinishReason: "tool_calls"}},
	{"values/spaced tags as the regex reads them", qcOnly, qcTools, "<function=f>< parameter = city >Paris</ parameter ></function>",
		Result{ToolCalls: []ToolCall{call("f", `{"city ": "Paris"}`)}, FinishReason: "tool_calls"}},
	{"values/one wrapping newline trimmed", qcOnly, qcTools, qcBuild("search", "q", "\n  padded  \n"),
		Result{ToolCalls: []ToolCall{call("search", `{"q": "\n  padded  \n"}`)}, FinishReason: "tool_calls"}},
	{"unicode", qcOnly, qcTools, qcBuild("search", "q", "東京 🌧️ \"quoted\" \\ <tag>"),
		Result{ToolCalls: []ToolCall{call("search", `{"q": "東京 🌧️ \"quoted\" \\ <tag>"}`)}, FinishReason: "tool_calls"}},
	{"malformed/missing parameter end", qcOnly, qcTools, "<tool_call>\n<function=get_weather>\n<parameter=city>SF</function>\n</tool_call>",
		Result{ToolCalls: []ToolCall{call("get_weather", `{}`)}, FinishReason: "tool_calls"}},
	{"malformed/no tool_call wrapper", qcOnly, qcTools, "Sure.\n<function=get_weather>\n<parameter=city>\nLima\n</parameter>\n</function>",
		Result{Content: new("Sure."), ToolCalls: []ToolCall{call("get_weather", `{"city": "Lima"}`)}, FinishReason: "tool_calls"}},
	{"malformed/empty call is text", qcOnly, qcTools, "a <tool_call>\n</tool_call> b",
		Result{Content: new("a <tool_call>\n</tool_call> b"), FinishReason: "stop"}},
	{"malformed/blank name is text", qcOnly, qcTools, "<tool_call><function= >x</function></tool_call>",
		Result{Content: new("<tool_call><function= >x</function></tool_call>"), FinishReason: "stop"}},
	{"malformed/second call without close", qcOnly, qcTools, "<function=a></function><function=b><parameter=x>1</parameter>",
		Result{ToolCalls: []ToolCall{call("a", `{}`), call("b", `{"x": "1"}`)}, FinishReason: "tool_calls"}},
	{"truncated/in value", qcOnly, qcTools, "\n<tool_call>\n<function=get_weather>\n<parameter=city>\nPar",
		Result{ToolCalls: []ToolCall{call("get_weather", `{}`)}, FinishReason: "tool_calls"}},
	{"truncated/in name", qcOnly, qcTools, "<tool_call>\n<function=get_wea",
		Result{ToolCalls: []ToolCall{call("get_wea", `{}`)}, FinishReason: "tool_calls"}},
	{"truncated/in opener", qcOnly, qcTools, "x <tool_ca", Result{Content: new("x <tool_ca"), FinishReason: "stop"}},
	{"reasoning/call inside think", qcQwen3, qcTools, "<think>\nI will call.\n" + qcBuild("get_weather", "city", "Paris"),
		Result{Reasoning: new("\nI will call.\n"), ToolCalls: []ToolCall{call("get_weather", `{"city": "Paris"}`)}, FinishReason: "tool_calls"}},
	{"reasoning/plain answer keeps leading whitespace", qcQwen3, qcTools, "<think>\nx\n</think>\n\nThe answer is 4.",
		Result{Reasoning: new("\nx\n"), Content: new("\n\nThe answer is 4."), FinishReason: "stop"}},
	{"tool_choice/none keeps text outside calls", qcQwen3, `{"tool_choice":"none","tools":[{"type":"function","function":{"name":"a"}}]}`,
		"<think>r</think>A" + qcBuild("a") + "B</think>C",
		Result{Reasoning: new("r"), Content: new("ABC"), FinishReason: "stop"}},
	{"tool_choice/none with only calls is null", qcOnly, `{"tool_choice":"none","tools":[{"type":"function","function":{"name":"a"}}]}`,
		qcBuild("a"), Result{FinishReason: "stop"}},
	{"tool_choice/none with a non-engine reasoning parser is raw", qcR1, `{"tool_choice":"none","tools":[{"type":"function","function":{"name":"a"}}]}`,
		"<think>r</think>A" + qcBuild("a"), Result{Reasoning: new("r"), Content: new("A" + qcBuild("a")), FinishReason: "stop"}},
	{"tool_choice/no tools strips around dropped calls", qcOnly, `{}`, " A </think>\n" + qcBuild("a") + "B",
		Result{Content: new("A"), FinishReason: "stop"}},
	{"tool_choice/no tools without calls", qcOnly, `{}`, "\n</think>x ", Result{Content: new("\nx "), FinishReason: "stop"}},
	{"tool_choice/required", qcOnly, `{"tool_choice":"required","tools":[{"type":"function","function":{"name":"a"}}]}`,
		qcBuild("a"), Result{Content: new(""), ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
}

func TestQwen3CoderCases(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, tc := range qwen3CoderCases {
		t.Run(tc.name, func(t *testing.T) {
			checkToolCase(t, r, tc.cfg, mustRequest(t, tc.req), tc.text, tc.want)
		})
	}
}

func TestQwen3CoderStreamsEarly(t *testing.T) {
	p, err := New(qcOnly, testVocab, mustRequest(t, qcTools), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := pushDelta(p, "Let me check. "); d.Content != "Let me check." {
		t.Fatalf("content not streamed before a call: %+v", d)
	}
	d := pushDelta(p, "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n2")
	if len(d.ToolCalls) != 1 || d.ToolCalls[0].Name != "get_weather" || d.ToolCalls[0].Arguments != `{"city": "Paris"` {
		t.Fatalf("name and finished parameters not streamed: %+v", d)
	}
}

func TestQwen3CoderHugeArguments(t *testing.T) {
	long := strings.Repeat("lorem <b>ipsum</b> \"dolor\" \\ ", 20000)
	text := qcBuild("search", "q", long, "days", "12345678901234567890")
	want := `{"q": ` + quoteForTest(long) + `, "days": "12345678901234567890"}`
	req := mustRequest(t, qcTools)
	start := time.Now()
	stream, _ := runSplits(t, qcOnly, req, text, randomCuts(len(text), rand.New(rand.NewPCG(5, 6))))
	if len(stream.ToolCalls) != 1 || stream.ToolCalls[0].Arguments != want {
		t.Fatalf("huge arguments not re-serialised exactly")
	}
	// ~150k pushes: quadratic work would take minutes.
	if el := time.Since(start); el > 20*time.Second {
		t.Fatalf("streaming %d bytes took %v", len(text), el)
	}
}

func quoteForTest(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

var qcFuzzPieces = []string{"<tool_call>", "</tool_call>", "<function=", "</function>", "<parameter=", "</parameter>",
	">", "<", "\n", " ", "get_weather", "days", "city", "3", "1.5", "true", "x", "東京", "</think>", "<think>",
	"< parameter =", "</ parameter >", "{\"a\": [1]}", "\\", "\"", "Hi.", "\t"}

func FuzzQwen3Coder(f *testing.F) {
	f.Add([]byte{0, 2, 10, 3, 11, 6, 12, 13, 5, 3, 1}, uint64(1))
	f.Add([]byte{25, 8, 0, 2, 9, 4, 21, 6, 15, 5}, uint64(2))
	f.Add([]byte{18, 24, 8, 2, 16, 6, 22, 3}, uint64(3))
	f.Fuzz(func(t *testing.T, recipe []byte, seed uint64) {
		text, ok := fuzzText(recipe, qcFuzzPieces)
		if !ok {
			return
		}
		for _, req := range []string{qcTools, `{}`, `{"tool_choice":"none","tools":[{"type":"function","function":{"name":"x"}}]}`} {
			r := mustRequest(t, req)
			for _, cfg := range []Config{qcOnly, qcQwen3} {
				batch, acc := streamAgrees(t, cfg, r, text, fuzzCuts(text, seed))
				if len(batch.ToolCalls) > 0 && (strings.Contains(acc.Content(), "<tool_call>") || strings.Contains(acc.Content(), "<function=")) {
					t.Fatalf("%+v %q: marker leaked as content %q", cfg, text, acc.Content())
				}
			}
		}
	})
}
