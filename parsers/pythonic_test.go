package parsers

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

var (
	pythonicOnly = Config{ToolParser: "pythonic", EnableAutoToolChoice: true}
	llama4Only   = Config{ToolParser: "llama4_pythonic", EnableAutoToolChoice: true}
)

// pythonicCases were checked against vLLM's regex + ast.parse path run in
// Python.
var pythonicCases = []struct {
	name string
	cfg  Config
	req  string
	text string
	want Result
}{
	{"plain text", pythonicOnly, weatherTools, "Hello! How can I help?", Result{Content: new("Hello! How can I help?"), FinishReason: "stop"}},
	{"single call", pythonicOnly, weatherTools, `[get_weather(city="Paris")]`,
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Paris"}`)}, FinishReason: "tool_calls"}},
	{"parallel calls", pythonicOnly, weatherTools, `[get_weather(city="A", unit='c'), search(query="vllm", top_k=3), get_time()]`,
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "A", "unit": "c"}`), call("search", `{"query": "vllm", "top_k": 3}`), call("get_time", `{}`)}, FinishReason: "tool_calls"}},
	{"parallel_tool_calls false", pythonicOnly, `{"parallel_tool_calls":false,"tools":[{"type":"function","function":{"name":"a"}}]}`, `[a(x=1), a(x=2)]`,
		Result{ToolCalls: []ToolCall{call("a", `{"x": 1}`)}, FinishReason: "tool_calls"}},
	{"literals", pythonicOnly, weatherTools, `[f(a=True, b=None, c=null, d=[1, 2.50, 1e-7, 1E400, 0x1F, 1_000, 12345678901234567890], e={'k': {'n': [false]}}, g=.5, h=1.)]`,
		Result{ToolCalls: []ToolCall{call("f", `{"a": true, "b": null, "c": null, "d": [1, 2.5, 1e-07, Infinity, 31, 1000, 12345678901234567890], "e": {"k": {"n": [false]}}, "g": 0.5, "h": 1.0}`)}, FinishReason: "tool_calls"}},
	{"strings", pythonicOnly, weatherTools, `[f(a='it\'s "q"', b="\u00e9\x41\101\n\t", c=r'\d', d='''tri"p''' "le", e="東京 🌧️", f='\q')]`,
		Result{ToolCalls: []ToolCall{call("f", `{"a": "it's \"q\"", "b": "éAA\n\t", "c": "\\d", "d": "tri\"ple", "e": "東京 🌧️", "f": "\\q"}`)}, FinishReason: "tool_calls"}},
	{"dict keys as Python keeps them", pythonicOnly, weatherTools, `[f(d={1.0: "a", 1: "b", True: "c", None: 0, 'x': 1, 'x': 2})]`,
		Result{ToolCalls: []ToolCall{call("f", `{"d": {"1.0": "c", "null": 0, "x": 2}}`)}, FinishReason: "tool_calls"}},
	{"repeated keyword keeps first place, last value", pythonicOnly, weatherTools, `[f(a=1, b=2, a=3)]`,
		Result{ToolCalls: []ToolCall{call("f", `{"a": 3, "b": 2}`)}, FinishReason: "tool_calls"}},
	{"dotted name and ignored positional argument", pythonicOnly, weatherTools, `[f(a=1), m.g(x[0] + 1, b=2)]`,
		Result{ToolCalls: []ToolCall{call("f", `{"a": 1}`), call("m.g", `{"b": 2}`)}, FinishReason: "tool_calls"}},
	{"comment and semicolon after the list", pythonicOnly, weatherTools, "[f(a=1)];  # done\n",
		Result{ToolCalls: []ToolCall{call("f", `{"a": 1}`)}, FinishReason: "tool_calls"}},
	{"text before", pythonicOnly, weatherTools, `Sure: [get_weather(city="Paris")]`, Result{Content: new(`Sure: [get_weather(city="Paris")]`), FinishReason: "stop"}},
	{"text after", pythonicOnly, weatherTools, `[get_weather(city="Paris")] Done.`, Result{Content: new(`[get_weather(city="Paris")] Done.`), FinishReason: "stop"}},
	{"negative number is not a literal", pythonicOnly, weatherTools, `[f(a=-1)]`, Result{Content: new(`[f(a=-1)]`), FinishReason: "stop"}},
	{"regex: space after the paren", pythonicOnly, weatherTools, `[f( a=1)]`, Result{Content: new(`[f( a=1)]`), FinishReason: "stop"}},
	{"regex: newline after the bracket", pythonicOnly, weatherTools, "[\n f(a=1)]", Result{Content: new("[\n f(a=1)]"), FinishReason: "stop"}},
	{"regex: trailing comma", pythonicOnly, weatherTools, `[f(a=1),]`, Result{Content: new(`[f(a=1),]`), FinishReason: "stop"}},
	{"regex: calls chained by whitespace", pythonicOnly, weatherTools, `[f() g()]`, Result{Content: new(`[f() g()]`), FinishReason: "stop"}},
	{"not calls", pythonicOnly, weatherTools, `[1, 2, 3]`, Result{Content: new(`[1, 2, 3]`), FinishReason: "stop"}},
	{"empty list", pythonicOnly, weatherTools, `[]`, Result{Content: new(`[]`), FinishReason: "stop"}},
	// CPython's compiler refuses a decimal literal over 4300 digits
	// (SyntaxError, so the text stays content); underscores and runs of
	// zeros do not count, floats have no limit.
	{"4300-digit int", pythonicOnly, weatherTools, `[f(a=` + strings.Repeat("7", 4300) + `)]`,
		Result{ToolCalls: []ToolCall{call("f", `{"a": `+strings.Repeat("7", 4300)+`}`)}, FinishReason: "tool_calls"}},
	{"4301-digit int fails", pythonicOnly, weatherTools, `[f(a=` + strings.Repeat("7", 4301) + `)]`,
		Result{Content: new(`[f(a=` + strings.Repeat("7", 4301) + `)]`), FinishReason: "stop"}},
	{"underscores are not digits", pythonicOnly, weatherTools, `[f(a=` + strings.Repeat("1_", 2200) + `1)]`,
		Result{ToolCalls: []ToolCall{call("f", `{"a": `+strings.Repeat("1", 2201)+`}`)}, FinishReason: "tool_calls"}},
	{"long zero", pythonicOnly, weatherTools, `[f(a=` + strings.Repeat("0", 5000) + `)]`,
		Result{ToolCalls: []ToolCall{call("f", `{"a": 0}`)}, FinishReason: "tool_calls"}},
	{"long float", pythonicOnly, weatherTools, `[f(a=` + strings.Repeat("3", 5000) + `e-5000, b=0.` + strings.Repeat("9", 5000) + `)]`,
		Result{ToolCalls: []ToolCall{call("f", `{"a": 0.3333333333333333, "b": 1.0}`)}, FinishReason: "tool_calls"}},
	{"bytes fail", pythonicOnly, weatherTools, `[f(a=b'x')]`, Result{Content: new(`[f(a=b'x')]`), FinishReason: "stop"}},
	{"f-string fails", pythonicOnly, weatherTools, `[f(a=f'x')]`, Result{Content: new(`[f(a=f'x')]`), FinishReason: "stop"}},
	{"set fails", pythonicOnly, weatherTools, `[f(a={1})]`, Result{Content: new(`[f(a={1})]`), FinishReason: "stop"}},
	{"truncated", pythonicOnly, weatherTools, `[get_weather(city="A"), search(q="b`, Result{Content: new(`[get_weather(city="A"), search(q="b`), FinishReason: "stop"}},
	{"tool_choice none", pythonicOnly, `{"tool_choice":"none","tools":[{"type":"function","function":{"name":"a"}}]}`, `[a(x=1)]`,
		Result{Content: new(`[a(x=1)]`), FinishReason: "stop"}},

	{"llama4/wrapped call", llama4Only, weatherTools, pythonStart + `[get_weather(city="Paris")]` + pythonEnd,
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Paris"}`)}, FinishReason: "tool_calls"}},
	{"llama4/bare call", llama4Only, weatherTools, `[get_weather(city="Paris")]`,
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Paris"}`)}, FinishReason: "tool_calls"}},
	{"llama4/markers removed from failed content", llama4Only, weatherTools, pythonStart + "Hi " + pythonEnd + "there",
		Result{Content: new("Hi there"), FinishReason: "stop"}},
	{"llama4/end marker kept without start", llama4Only, weatherTools, "Hi " + pythonEnd, Result{Content: new("Hi " + pythonEnd), FinishReason: "stop"}},
	{"llama4/partial start is text", llama4Only, weatherTools, "<|python_st", Result{Content: new("<|python_st"), FinishReason: "stop"}},
}

func TestPythonicCases(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, tc := range pythonicCases {
		t.Run(tc.name, func(t *testing.T) {
			checkToolCase(t, r, tc.cfg, mustRequest(t, tc.req), tc.text, tc.want)
		})
	}
}

func TestPythonicStreamsCallsBeforeTheEnd(t *testing.T) {
	p, err := New(pythonicOnly, testVocab, mustRequest(t, weatherTools), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := pushDelta(p, `[get_weather(city="Paris"), sea`)
	if len(d.ToolCalls) != 1 || d.ToolCalls[0].Name != "get_weather" || d.ToolCalls[0].Arguments != `{"city": "Paris"}` || d.Content != "" {
		t.Fatalf("first delta = %+v", d)
	}
}

func TestPythonicHugeArguments(t *testing.T) {
	long := strings.Repeat(`lorem \"ipsum\" `, 20000)
	text := `[w(text="` + long + `", n=12345678901234567890)]`
	req := mustRequest(t, weatherTools)
	batch, _ := runSplits(t, pythonicOnly, req, text, nil)
	want := `{"text": "` + strings.ReplaceAll(long, `\"`, `\"`) + `", "n": 12345678901234567890}`
	if len(batch.ToolCalls) != 1 || batch.ToolCalls[0].Arguments != want {
		t.Fatalf("huge arguments not re-serialised exactly")
	}
	stream, _ := runSplits(t, pythonicOnly, req, text, randomCuts(len(text), rand.New(rand.NewPCG(5, 6))))
	if !reflect.DeepEqual(normalise(stream), normalise(batch)) {
		t.Fatal("stream differs from batch")
	}
}

// pyFuzzPieces are fragments a pythonic output is built from.
var pyFuzzPieces = []string{"[", "]", "(", ")", "get_weather", "m.g", "a=", "b=", "1", "2.5", "-1", "1e3", `"x"`, `'y'`,
	`"\u00e9\n"`, `'''t'''`, "b'x'", "True", "None", "null", "{", "}", ":", ", ", "\n", "# c\n", ";", "東京", "=", ".",
	pythonStart, pythonEnd, "<|python_", "\\", `"`}

func FuzzPythonic(f *testing.F) {
	f.Add([]byte{0, 4, 2, 6, 12, 23, 7, 8, 3, 1}, uint64(1))
	f.Add([]byte{30, 0, 5, 2, 3, 23, 4, 2, 6, 20, 12, 22, 8, 21, 3, 1, 31}, uint64(2))
	f.Fuzz(func(t *testing.T, recipe []byte, seed uint64) {
		var sb strings.Builder
		for _, b := range recipe {
			sb.WriteString(pyFuzzPieces[int(b)%len(pyFuzzPieces)])
		}
		text := sb.String()
		req := mustRequest(t, weatherTools)
		for _, cfg := range []Config{pythonicOnly, llama4Only} {
			batch, batchAcc := runSplits(t, cfg, req, text, nil)
			stream, acc := runSplits(t, cfg, req, text, randomCuts(len(text), rand.New(rand.NewPCG(seed, 9))))
			if !reflect.DeepEqual(normalise(stream), normalise(batch)) {
				t.Fatalf("%s %q:\nstream %s\n batch %s", cfg.ToolParser, text, dump(stream), dump(batch))
			}
			// Streamed calls, even ones the final answer drops, must not
			// depend on the chunking either.
			if s, b := streamedCalls(&acc), streamedCalls(&batchAcc); !reflect.DeepEqual(s, b) {
				t.Fatalf("%s %q: streamed calls %q, one push %q", cfg.ToolParser, text, s, b)
			}
			if len(batch.ToolCalls) > 0 && acc.Content() != "" {
				t.Fatalf("%s %q: content %q next to calls", cfg.ToolParser, text, acc.Content())
			}
			if cfg.ToolParser == "llama4_pythonic" && strings.HasPrefix(text, pythonStart) && strings.Contains(acc.Content(), pythonEnd) {
				t.Fatalf("%q: %s leaked as content %q", text, pythonEnd, acc.Content())
			}
		}
	})
}

// TestPythonicRegexRefusedNames covers call names vLLM's TOOL_CALL_REGEX
// refuses (its names start with an ASCII letter and have no dots) while
// Python accepts them. The regex is checked byte by byte, so a refused
// call must never stream, whether its "(" arrives in the same push as the
// refused byte or later; calls before it stream in every chunking and the
// final answer is the content. After a keyword argument the regex's ".*"
// absorbs anything, so a later "_b" is a call.
func TestPythonicRegexRefusedNames(t *testing.T) {
	cases := []struct {
		name     string
		text     string
		streamed []string // name + " " + arguments of every streamed call
		calls    bool     // the final answer keeps the streamed calls
	}{
		{"underscore first", "[_time()]", nil, false},
		{"digit first", "[9time()]", nil, false},
		{"underscore first with argument", `[_w(city="Paris")]`, nil, false},
		{"dotted first", "[m.g()]", nil, false},
		{"underscore after argument-less call", "[get_time(), _time()]", []string{"get_time {}"}, false},
		{"digit after argument-less call", "[get_time(), 9x()]", []string{"get_time {}"}, false},
		{"dotted after argument-less call", "[get_time(), m.g()]", []string{"get_time {}"}, false},
		{"bare positional name", "[get_time(b)]", []string{"get_time "}, false},
		{"underscore after keyword argument", "[a(x=1), _b(y=2)]", []string{`a {"x": 1}`, `_b {"y": 2}`}, true},
		{"digit after keyword argument", "[a(x=1), 2b(y=2)]", []string{`a {"x": 1}`}, false},
	}
	req := mustRequest(t, weatherTools)
	r := rand.New(rand.NewPCG(41, 42))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bytewise := make([]int, 0, len(tc.text))
			for i := 1; i < len(tc.text); i++ {
				bytewise = append(bytewise, i)
			}
			chunkings := [][]int{nil, bytewise}
			for k := 0; k < 10; k++ {
				chunkings = append(chunkings, randomCuts(len(tc.text), r))
			}
			for _, cfg := range []Config{pythonicOnly, llama4Only} {
				for _, cuts := range chunkings {
					res, acc := runSplits(t, cfg, req, tc.text, cuts)
					streamed := streamedCalls(&acc)
					if !reflect.DeepEqual(streamed, tc.streamed) {
						t.Fatalf("%s cuts %v: streamed %q, want %q", cfg.ToolParser, cuts, streamed, tc.streamed)
					}
					if tc.calls {
						if res.Content != nil || len(res.ToolCalls) != len(tc.streamed) {
							t.Fatalf("%s cuts %v: result %s, want the streamed calls", cfg.ToolParser, cuts, dump(res))
						}
						continue
					}
					if res.Content == nil || *res.Content != tc.text || len(res.ToolCalls) != 0 {
						t.Fatalf("%s cuts %v: result %s, want content %q only", cfg.ToolParser, cuts, dump(res), tc.text)
					}
				}
			}
		})
	}
}

// streamedCalls lists every call a stream sent as name + " " + arguments.
func streamedCalls(acc *Accumulator) []string {
	var out []string
	for _, c := range acc.Calls() {
		out = append(out, c.Name+" "+c.Arguments)
	}
	return out
}
