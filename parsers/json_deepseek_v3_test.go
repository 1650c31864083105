package parsers

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// dsVocab knows the DeepSeek tool markers.
var dsVocab = fakeVocab{dsCallsBegin: 128806, dsCallsEnd: 128807, dsCallBegin: 128808, dsCallEnd: 128809, dsSep: 128814}

var (
	dsV3  = Config{ToolParser: "deepseek_v3", EnableAutoToolChoice: true}
	dsV31 = Config{ToolParser: "deepseek_v31", EnableAutoToolChoice: true}
)

// v3Call and v31Call spell one call in each format.
func v3Call(typ, name, args string) string {
	return dsCallBegin + typ + dsSep + name + "\n```json\n" + args + "\n```" + dsCallEnd
}

func v31Call(name, args string) string { return dsCallBegin + name + dsSep + args + dsCallEnd }

var deepseekCases = []struct {
	name string
	cfg  Config
	req  string
	text string
	want Result
}{
	{"v3/plain text", dsV3, weatherTools, "Paris is the capital.", Result{Content: new("Paris is the capital."), FinishReason: "stop"}},
	{"v3/single call", dsV3, weatherTools, dsCallsBegin + v3Call("function", "get_weather", `{"city": "Paris"}`) + dsCallsEnd,
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Paris"}`)}, FinishReason: "tool_calls"}},
	{"v3/arguments kept raw", dsV3, weatherTools, dsCallsBegin + v3Call("function", "f", `{city:  Paris,}`),
		Result{ToolCalls: []ToolCall{call("f", `{city:  Paris,}`)}, FinishReason: "tool_calls"}},
	{"v3/parallel calls, text between and after dropped", dsV3, weatherTools,
		"Let me see.\n" + dsCallsBegin + v3Call("function", "a", `{}`) + "\nnoise " + v3Call("function", "b", `[1]`) + dsCallsEnd + " bye",
		Result{Content: new("Let me see.\n"), ToolCalls: []ToolCall{call("a", `{}`), call("b", `[1]`)}, FinishReason: "tool_calls"}},
	{"v3/whitespace content is null", dsV3, weatherTools, "\n\n" + dsCallsBegin + v3Call("function", "a", `{}`),
		Result{ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
	{"v3/pretty arguments do not match", dsV3, weatherTools, dsCallsBegin + v3Call("function", "a", "{\n  \"x\": 1\n}"),
		Result{FinishReason: "stop"}},
	{"v3/bare calls-begin: null content, no calls", dsV3, weatherTools, dsCallsBegin, Result{FinishReason: "stop"}},
	{"v3/last separator splits type and name", dsV3, weatherTools, dsCallsBegin + v3Call("function"+dsSep+"function", "n", `{}`),
		Result{Content: new(dsCallsBegin + v3Call("function"+dsSep+"function", "n", `{}`)), FinishReason: "stop"}},
	{"v3/type other than function fails everything", dsV3, weatherTools, "x" + dsCallsBegin + v3Call("function", "a", `{}`) + v3Call("tool", "b", `{}`),
		Result{Content: new("x" + dsCallsBegin + v3Call("function", "a", `{}`) + v3Call("tool", "b", `{}`)), FinishReason: "stop"}},
	{"v3/failed attempt rescans its lines", dsV3, weatherTools,
		dsCallsBegin + dsCallBegin + "function" + dsSep + "a\n" + v3Call("function", "b", `{"k": 1}`),
		Result{ToolCalls: []ToolCall{call("b", `{"k": 1}`)}, FinishReason: "tool_calls"}},
	{"v3/call before calls-begin counts", dsV3, weatherTools, v3Call("function", "a", `{}`) + dsCallsBegin,
		Result{Content: new(v3Call("function", "a", `{}`)), ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
	{"v3/call without calls-begin is content", dsV3, weatherTools, v3Call("function", "a", `{}`),
		Result{Content: new(v3Call("function", "a", `{}`)), FinishReason: "stop"}},
	{"v3/truncated in arguments", dsV3, weatherTools, dsCallsBegin + dsCallBegin + "function" + dsSep + "a\n```json\n{\"c", Result{FinishReason: "stop"}},
	{"v3/unicode", dsV3, weatherTools, dsCallsBegin + v3Call("function", "s", `{"q": "東京 🌧️"}`),
		Result{ToolCalls: []ToolCall{call("s", `{"q": "東京 🌧️"}`)}, FinishReason: "tool_calls"}},
	{"v3/tool_choice none", dsV3, `{"tool_choice":"none","tools":[{"type":"function","function":{"name":"a"}}]}`, dsCallsBegin + v3Call("function", "a", `{}`),
		Result{Content: new(dsCallsBegin + v3Call("function", "a", `{}`)), FinishReason: "stop"}},
	{"v3/tool_choice required parses as auto", dsV3, `{"tool_choice":"required","tools":[{"type":"function","function":{"name":"a"}}]}`, dsCallsBegin + v3Call("function", "a", `{}`),
		Result{Content: new(""), ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},
	{"v3/parallel_tool_calls false", dsV3, `{"parallel_tool_calls":false,"tools":[{"type":"function","function":{"name":"a"}}]}`,
		dsCallsBegin + v3Call("function", "a", `{}`) + v3Call("function", "b", `{}`),
		Result{ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "tool_calls"}},

	{"v31/single call", dsV31, weatherTools, dsCallsBegin + v31Call("get_weather", `{"city": "Paris"}`) + dsCallsEnd,
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Paris"}`)}, FinishReason: "tool_calls"}},
	{"v31/text before, calls, text after", dsV31, weatherTools, "Hi " + dsCallsBegin + v31Call("a", `{"x": [1, 2]}`) + "\n" + v31Call("b", `{}`) + dsCallsEnd + "\nDone.",
		Result{Content: new("Hi "), ToolCalls: []ToolCall{call("a", `{"x": [1, 2]}`), call("b", `{}`)}, FinishReason: "tool_calls"}},
	{"v31/name is lazy, arguments up to the first end", dsV31, weatherTools, dsCallsBegin + dsCallBegin + "a" + dsSep + "b" + dsSep + "c" + dsCallEnd + "d" + dsCallEnd,
		Result{ToolCalls: []ToolCall{call("a", "b"+dsSep+"c")}, FinishReason: "tool_calls"}},
	{"v31/name may hold a call-begin", dsV31, weatherTools, dsCallsBegin + dsCallBegin + "x" + v31Call("a", `{}`),
		Result{ToolCalls: []ToolCall{call("x"+dsCallBegin+"a", `{}`)}, FinishReason: "tool_calls"}},
	{"v31/newline in arguments does not match", dsV31, weatherTools, dsCallsBegin + v31Call("a", "{\n}") + v31Call("b", `{}`),
		Result{ToolCalls: []ToolCall{call("b", `{}`)}, FinishReason: "tool_calls"}},
	{"v31/truncated", dsV31, weatherTools, dsCallsBegin + dsCallBegin + "a" + dsSep + `{"x`, Result{FinishReason: "stop"}},
	{"v31/tool_choice named parses as auto", dsV31, `{"tool_choice":{"type":"function","function":{"name":"a"}},"tools":[{"type":"function","function":{"name":"a"}}]}`,
		dsCallsBegin + v31Call("a", `{}`), Result{Content: new(""), ToolCalls: []ToolCall{call("a", `{}`)}, FinishReason: "stop"}},
}

func TestDeepSeekCases(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, tc := range deepseekCases {
		t.Run(tc.name, func(t *testing.T) {
			checkToolCaseWith(t, r, dsVocab, tc.cfg, mustRequest(t, tc.req), tc.text, tc.want)
		})
	}
}

func TestDeepSeekNeedsMarkers(t *testing.T) {
	for _, cfg := range []Config{dsV3, dsV31} {
		if _, err := New(cfg, fakeVocab{}, mustRequest(t, weatherTools), nil); err == nil {
			t.Errorf("%s: want an error without the calls markers in the vocabulary", cfg.ToolParser)
		}
	}
}

func TestDeepSeekHugeArguments(t *testing.T) {
	long := `{"text": "` + strings.Repeat("lorem ipsum ", 50000) + `"}`
	req := mustRequest(t, weatherTools)
	for _, tc := range []struct {
		cfg  Config
		text string
	}{{dsV3, dsCallsBegin + v3Call("function", "w", long)}, {dsV31, dsCallsBegin + v31Call("w", long)}} {
		batch, _ := runSplitsWith(t, dsVocab, tc.cfg, req, tc.text, nil)
		if len(batch.ToolCalls) != 1 || batch.ToolCalls[0].Arguments != long {
			t.Fatalf("%s: huge arguments not kept", tc.cfg.ToolParser)
		}
		stream, _ := runSplitsWith(t, dsVocab, tc.cfg, req, tc.text, randomCuts(len(tc.text), rand.New(rand.NewPCG(5, 6))))
		if !reflect.DeepEqual(normalise(stream), normalise(batch)) {
			t.Fatalf("%s: stream differs from batch", tc.cfg.ToolParser)
		}
	}
}

// dsFuzzPieces are fragments a DeepSeek output is built from.
var dsFuzzPieces = []string{dsCallsBegin, dsCallsEnd, dsCallBegin, dsCallEnd, dsSep, "function", "tool", "get_weather",
	"\n", "```json", "```", `{"city": "東京"}`, "{}", " ", "text", "<｜tool", "▁", "｜>", "`"}

func FuzzDeepSeek(f *testing.F) {
	f.Add([]byte{0, 2, 5, 4, 7, 8, 9, 8, 11, 8, 10, 3, 1}, uint64(1))
	f.Add([]byte{14, 0, 2, 7, 4, 12, 3, 8, 2, 6, 4, 7, 3}, uint64(2))
	f.Fuzz(func(t *testing.T, recipe []byte, seed uint64) {
		var sb strings.Builder
		for _, b := range recipe {
			sb.WriteString(dsFuzzPieces[int(b)%len(dsFuzzPieces)])
		}
		text := sb.String()
		req := mustRequest(t, weatherTools)
		for _, cfg := range []Config{dsV3, dsV31} {
			batch, _ := runSplitsWith(t, dsVocab, cfg, req, text, nil)
			stream, acc := runSplitsWith(t, dsVocab, cfg, req, text, randomCuts(len(text), rand.New(rand.NewPCG(seed, 9))))
			if !reflect.DeepEqual(normalise(stream), normalise(batch)) {
				t.Fatalf("%s %q:\nstream %s\n batch %s", cfg.ToolParser, text, dump(stream), dump(batch))
			}
			if len(batch.ToolCalls) > 0 && strings.Contains(acc.Content(), dsCallsBegin) {
				t.Fatalf("%s %q: marker leaked as content %q", cfg.ToolParser, text, acc.Content())
			}
		}
	})
}
