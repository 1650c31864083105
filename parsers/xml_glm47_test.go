package parsers

import (
	"strings"
	"testing"
)

var (
	glm47Only = Config{ToolParser: "glm47", EnableAutoToolChoice: true}
	glm45Only = Config{ToolParser: "glm45", EnableAutoToolChoice: true}
)

// glmTools are the sample_tools of vLLM's test_glm47_moe_tool_parser.py
// plus a typed tool for schema coercion.
const glmTools = `{"tools":[{"type":"function","function":{"name":"get_current_date","parameters":{}}},
{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"},"date":{"type":"string"}}}}},
{"type":"function","function":{"name":"count","parameters":{"type":"object","properties":{"n":{"type":"integer"},"ok":{"type":"boolean"},"tags":{"type":"array"}}}}}]}`

// The first cases are TestGlm47ExtractToolCalls of vLLM's
// tests/tool_parsers/test_glm47_moe_tool_parser.py (outputs, names,
// arguments and contents as expected there).
var glmCases = []toolCase{
	{"plain text", glmTools, "This is a test", Result{Content: new("This is a test"), FinishReason: "stop"}},
	{"single call/zero args inline", glmTools, "<tool_call>get_current_date</tool_call>",
		Result{ToolCalls: []ToolCall{call("get_current_date", `{}`)}, FinishReason: "tool_calls"}},
	{"single call/zero args newline", glmTools, "<tool_call>get_current_date\n</tool_call>",
		Result{ToolCalls: []ToolCall{call("get_current_date", `{}`)}, FinishReason: "tool_calls"}},
	{"single call/args same line", glmTools, "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call>",
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Beijing"}`)}, FinishReason: "tool_calls"}},
	{"single call/args with newlines", glmTools, "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n</tool_call>",
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Beijing"}`)}, FinishReason: "tool_calls"}},
	{"single call/whitespace preserved in values", glmTools, "<tool_call>get_weather<arg_key>city</arg_key><arg_value>  Beijing  </arg_value></tool_call>",
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "  Beijing  "}`)}, FinishReason: "tool_calls"}},
	{"call after text", glmTools, "Checking.<tool_call>get_current_date</tool_call>",
		Result{Content: new("Checking."), ToolCalls: []ToolCall{call("get_current_date", `{}`)}, FinishReason: "tool_calls"}},
	{"parallel calls", glmTools, "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call>" +
		"<tool_call>get_weather<arg_key>city</arg_key><arg_value>Shanghai</arg_value></tool_call>",
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Beijing"}`), call("get_weather", `{"city": "Shanghai"}`)}, FinishReason: "tool_calls"}},
	{"parallel calls/parallel_tool_calls false", `{"parallel_tool_calls":false,"tools":[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"b"}}]}`,
		"<tool_call>a</tool_call><tool_call>b</tool_call>", Result{ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
	{"call after whitespace gives null content", glmTools, "  \n  <tool_call>get_current_date</tool_call>",
		Result{ToolCalls: []ToolCall{call("get_current_date", `{}`)}, FinishReason: "tool_calls"}},
	{"content stripped, text after calls dropped", glmTools, " Sure. \n<tool_call>get_current_date</tool_call> and more",
		Result{Content: new("Sure."), ToolCalls: []ToolCall{call("get_current_date", `{}`)}, FinishReason: "tool_calls"}},
	{"think block and end tag leave content with calls", glmTools, "a<think>hidden</think>b</think>c<tool_call>get_current_date</tool_call>",
		Result{Content: new("abc"), ToolCalls: []ToolCall{call("get_current_date", `{}`)}, FinishReason: "tool_calls"}},
	{"think block kept without calls", glmTools, "a<think>hidden</think>b",
		Result{Content: new("a<think>hidden</think>b"), FinishReason: "stop"}},
	{"schema coercion", glmTools, "<tool_call>count<arg_key>n</arg_key><arg_value>3.0</arg_value><arg_key>ok</arg_key><arg_value>True</arg_value>" +
		"<arg_key>tags</arg_key><arg_value>[\"a\", 1.50]</arg_value><arg_key>x</arg_key><arg_value>7</arg_value></tool_call>",
		Result{ToolCalls: []ToolCall{call("count", `{"n": 3.0, "ok": true, "tags": ["a", 1.5], "x": "7"}`)}, FinishReason: "tool_calls"}},
	{"key stripped, gap whitespace allowed", glmTools, "<tool_call>get_weather<arg_key> city </arg_key> \n <arg_value>Paris</arg_value></tool_call>",
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Paris"}`)}, FinishReason: "tool_calls"}},
	{"key end without value start joins the key", glmTools, "<tool_call>get_weather<arg_key>a</arg_key>x<arg_key>b</arg_key><arg_value>v</arg_value></tool_call>",
		Result{ToolCalls: []ToolCall{call("get_weather", `{"a</arg_key>x<arg_key>b": "v"}`)}, FinishReason: "tool_calls"}},
	{"unknown tool dropped", glmTools, "Hi<tool_call>nope<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>",
		Result{Content: new("Hi<tool_call>nope<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>"), FinishReason: "stop"}},
	{"unknown tool next to a known one", glmTools, "<tool_call>nope</tool_call><tool_call>get_current_date</tool_call>",
		Result{ToolCalls: []ToolCall{call("get_current_date", `{}`)}, FinishReason: "tool_calls"}},
	{"truncated/open value dropped", glmTools, "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value><arg_key>date</arg_key><arg_value>to",
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Paris"}`)}, FinishReason: "tool_calls"}},
	{"truncated/in name", glmTools, "x<tool_call>get_cur", Result{Content: new("x<tool_call>get_cur"), FinishReason: "stop"}},
	{"unicode", glmTools, "東京<tool_call>get_weather<arg_key>city</arg_key><arg_value>é 😀 \"q\"</arg_value></tool_call>",
		Result{Content: new("東京"), ToolCalls: []ToolCall{call("get_weather", `{"city": "é 😀 \"q\""}`)}, FinishReason: "tool_calls"}},
	// Without tools (tool_choice "none") vLLM's engine path still parses;
	// expectations measured by running vLLM's glm47_moe engine.
	{"no tools/named call strips content", `{}`, "Hi <tool_call>x</tool_call> after", Result{Content: new("Hi"), FinishReason: "stop"}},
	{"no tools/think markup removed", `{}`, " a</think>b <think>r</think>c ", Result{Content: new(" ab c "), FinishReason: "stop"}},
	{"no tools/nameless call puts later text first", `{}`, "  <tool_call></tool_call> t ", Result{Content: new(" t   "), FinishReason: "stop"}},
	{"tool_choice/none", `{"tool_choice":"none","tools":[{"type":"function","function":{"name":"a"}}]}`, " x <tool_call>a</tool_call>y",
		Result{Content: new(" x y"), FinishReason: "stop"}},
}

func TestGLM47Cases(t *testing.T) { runToolCases(t, glm47Only, 71, glmCases) }

func TestGLM45SameAsGLM47(t *testing.T) { runToolCases(t, glm45Only, 72, glmCases[:6]) }

func TestGLM47StreamsEarly(t *testing.T) {
	p, err := New(glm47Only, testVocab, mustRequest(t, glmTools), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := pushDelta(p, "Sure thing"); d.Content != "Sure thing" {
		t.Fatalf("content not streamed: %+v", d)
	}
	d := pushDelta(p, "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value><arg_key>da")
	if len(d.ToolCalls) != 1 || d.ToolCalls[0].Name != "get_weather" || d.ToolCalls[0].Arguments != `{"city": "Paris"` {
		t.Fatalf("name and finished pair not streamed: %+v", d)
	}
}

func TestGLM47HugeArguments(t *testing.T) {
	long := strings.Repeat(`lorem <arg ipsum> "dolor" \ `, 20000)
	text := "<tool_call>get_weather<arg_key>city</arg_key><arg_value>" + long + "</arg_value></tool_call>"
	got, _ := runSplits(t, glm47Only, mustRequest(t, glmTools), text, []int{100, 5000, 70000})
	if len(got.ToolCalls) != 1 || got.ToolCalls[0].Arguments != `{"city": `+quoteForTest(long)+`}` {
		t.Fatal("huge arguments not re-serialised exactly")
	}
}

var glmFuzzPieces = []string{"<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "<think>", "</think>",
	"get_weather", "get_current_date", "city", " ", "\n", "x", `"name": "count"`, "<arg_", "東京"}

func FuzzGLM47(f *testing.F) {
	f.Add([]byte{13, 0, 8, 2, 10, 3, 4, 13, 5, 1, 13}, uint64(1))
	f.Add([]byte{6, 13, 7, 0, 9, 1}, uint64(2))
	f.Fuzz(func(t *testing.T, recipe []byte, seed uint64) {
		fuzzToolParser(t, glm47Only, glmFuzzPieces, []string{"<tool_call>"}, recipe, seed)
	})
}
