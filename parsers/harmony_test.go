package parsers

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// Harmony parse cases. Texts follow openai/harmony's src/tests.rs parse
// cases and test-data (test_streamable_parser, test_simple_tool_call,
// test_tool_response_parsing, the preamble and malformed-header cases of
// StreamableParser) decoded with skip_special_tokens off; expectations are
// vLLM's HarmonyParser.parse on top (vllm/parser/harmony.py at bf578e1):
// the src field names which. See testdata/harmony/README.md.
var (
	harmonyBoth  = Config{ReasoningParser: "openai_gptoss", ToolParser: "openai", EnableAutoToolChoice: true}
	harmonyTool  = Config{ToolParser: "openai", EnableAutoToolChoice: true}
	harmonyReasn = Config{ReasoningParser: "openai_gptoss"}
)

type harmonyCase struct {
	name, src, text string
	cfg             Config
	wantR, wantC    *string
	calls           []ToolCall
}

var harmonyCases = []harmonyCase{
	{name: "analysis then final", src: "tests.rs test_streamable_parser",
		text:  "<|channel|>analysis<|message|>User asks: \"What is 2 + 2?\" Simple arithmetic. Provide answer.<|end|><|start|>assistant<|channel|>final<|message|>2 + 2 = 4.<|return|>",
		wantR: new("User asks: \"What is 2 + 2?\" Simple arithmetic. Provide answer."), wantC: new("2 + 2 = 4.")},
	{name: "tool call", src: "tests.rs test_simple_tool_call",
		text:  "<|channel|>analysis<|message|>User asks: \"What is the weather in Tokyo?\" We need to use get_weather tool.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\": \"Tokyo\"}<|call|>",
		wantR: new("User asks: \"What is the weather in Tokyo?\" We need to use get_weather tool."),
		calls: []ToolCall{{Type: "function", Name: "get_weather", Arguments: `{"location": "Tokyo"}`}}},
	{name: "recipient before channel", src: "tests.rs test_tool_call_with_constrain_marker_adjacent; vLLM arguments json.dumps(json.loads)",
		text:  "<|channel|>analysis<|message|>think<|end|><|start|>assistant to=functions.get_weather<|channel|>commentary<|constrain|>json<|message|>{\"location\":\"Tokyo\",\"u\":[1,2]}<|call|>",
		wantR: new("think"), calls: []ToolCall{{Type: "function", Name: "get_weather", Arguments: `{"location": "Tokyo", "u": [1, 2]}`}}},
	{name: "invalid json arguments kept", src: "vLLM parse JSONDecodeError branch",
		text:  "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"a\": <|call|>",
		calls: []ToolCall{{Type: "function", Name: "f", Arguments: `{"a": `}}},
	{name: "preamble is content", src: "vLLM _SegmentType (commentary without recipient)",
		text:  "<|channel|>analysis<|message|>plan<|end|><|start|>assistant<|channel|>commentary<|message|>Checking the weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{}<|call|>",
		wantR: new("plan"), wantC: new("Checking the weather."),
		calls: []ToolCall{{Type: "function", Name: "get_weather", Arguments: `{}`}}},
	{name: "parts joined by newline", src: "vLLM parse \"\\n\".join",
		text:  "<|channel|>analysis<|message|>a<|end|><|start|>assistant<|channel|>analysis<|message|>b<|end|><|start|>assistant<|channel|>commentary<|message|>c<|end|><|start|>assistant<|channel|>final<|message|>d<|return|>",
		wantR: new("a\nb"), wantC: new("c\nd")},
	{name: "truncated final (length)", src: "StreamableParser process_eos in Content",
		text:  "<|channel|>analysis<|message|>long<|end|><|start|>assistant<|channel|>final<|message|>The answer is",
		wantR: new("long"), wantC: new("The answer is")},
	{name: "truncated analysis", src: "StreamableParser process_eos in Content",
		text: "<|channel|>analysis<|message|>still thinking", wantR: new("still thinking")},
	{name: "builtin recipient ignored", src: "vLLM is_function_recipient (python)",
		text:  "<|channel|>analysis<|message|>x<|end|><|start|>assistant to=python<|channel|>commentary<|message|>print(1)<|call|>",
		wantR: new("x")},
	{name: "reasoning parser only drops calls", src: "vLLM TOOL if self.tool_parser", cfg: harmonyReasn,
		text:  "<|channel|>analysis<|message|>r<|end|><|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{}<|call|>",
		wantR: new("r")},
	{name: "tool parser only drops reasoning", src: "vLLM REASONING if self.reasoning_parser", cfg: harmonyTool,
		text:  "<|channel|>analysis<|message|>r<|end|><|start|>assistant<|channel|>final<|message|>hi<|return|>",
		wantC: new("hi")},
	{name: "stop in header", src: "StreamableParser non-strict stop token in Header",
		text: "<|channel|>final hello there<|end|>", wantC: new("hello there")},
	{name: "text outside messages is an error", src: "StreamableParser ExpectStart bail; vLLM returns the raw output",
		text: "<|channel|>final<|message|>ok<|end|>junk", wantC: new("okjunk")},
	{name: "end of output inside a header", src: "vLLM bf578e1 HarmonyParser.flush recovery: the unfinished message's tokens decoded as a final message",
		text:  "<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{}<|call|><|start|>assistant<|channel|>fin",
		wantR: new("x"), wantC: new("<|start|>assistant<|channel|>fin"), calls: []ToolCall{{Type: "function", Name: "f", Arguments: "{}"}}},
	{name: "end of output inside the first header", src: "vLLM bf578e1 HarmonyParser.flush recovery (all tokens)",
		text: "<|channel|>final", wantC: new("<|channel|>final")},
	{name: "recovered text joins content", src: "vLLM bf578e1 recovery + \"\\n\".join",
		text:  "<|channel|>final<|message|>a<|end|><|start|>assistant to=functions.g",
		wantC: new("a\n<|start|>assistant to=functions.g")},
	{name: "recovery with the reasoning parser only", src: "vLLM bf578e1 recovery", cfg: harmonyReasn,
		text:  "<|channel|>analysis<|message|>r<|end|><|start|>assistant<|channel|>final",
		wantR: new("r"), wantC: new("<|start|>assistant<|channel|>final")},
	{name: "recovery with the tool parser only", src: "vLLM bf578e1 recovery", cfg: harmonyTool,
		text:  "<|channel|>analysis<|message|>r<|end|><|start|>assistant<|channel|>final",
		wantC: new("<|start|>assistant<|channel|>final")},
	{name: "non-JSON content type verbatim", src: "vLLM parse content_type without json",
		text:  "<|channel|>commentary to=functions.run code<|message|>ls -la<|call|>",
		calls: []ToolCall{{Type: "function", Name: "run", Arguments: "ls -la"}}},
}

func TestHarmonyCases(t *testing.T) {
	req := mustRequest(t, weatherTools)
	for _, c := range harmonyCases {
		cfg := c.cfg
		if cfg == (Config{}) {
			cfg = harmonyBoth
		}
		batch, _ := runSplits(t, cfg, req, c.text, nil)
		want := Result{Reasoning: c.wantR, Content: c.wantC, ToolCalls: c.calls}
		got := normalise(batch)
		got.FinishReason = ""
		if !reflect.DeepEqual(got, normalise(want)) {
			t.Errorf("%s (%s):\n got %s\nwant %s", c.name, c.src, dump(got), dump(normalise(want)))
		}
		// One byte per push, one marker-sized piece per push, random cuts.
		var each []int
		for i := 1; i < len(c.text); i++ {
			each = append(each, i)
		}
		splits := [][]int{each}
		r := rand.New(rand.NewPCG(uint64(len(c.text)), 3))
		for range 20 {
			splits = append(splits, randomCuts(len(c.text), r))
		}
		for _, cuts := range splits {
			s, _ := runSplits(t, cfg, req, c.text, cuts)
			if !reflect.DeepEqual(normalise(s), normalise(batch)) {
				t.Fatalf("%s: stream %s\n batch %s", c.name, dump(s), dump(batch))
			}
		}
	}
}

func TestHarmonyStateRoundTrip(t *testing.T) {
	req := mustRequest(t, weatherTools)
	for _, c := range harmonyCases {
		batch, _ := runSplits(t, harmonyBoth, req, c.text, nil)
		for cut := 1; cut < len(c.text); cut += 7 {
			p, err := New(harmonyBoth, testVocab, req, nil)
			if err != nil {
				t.Fatal(err)
			}
			var acc Accumulator
			acc.Add(pushDelta(p, c.text[:cut]))
			st, err := marshalState(p)
			if err != nil {
				t.Fatal(err)
			}
			q, err := Restore(harmonyBoth, testVocab, req, st)
			if err != nil {
				t.Fatal(err)
			}
			acc.Add(pushDelta(q, c.text[cut:]))
			acc.Add(finishDelta(q))
			if got := acc.Result(q, "stop"); !reflect.DeepEqual(normalise(got), normalise(batch)) {
				t.Fatalf("%s cut %d: %s\nwant %s", c.name, cut, dump(got), dump(batch))
			}
		}
	}
}

var harmonyFuzzPieces = []string{
	"<|start|>", "assistant", "<|channel|>", "analysis", "final", "commentary", " to=functions.get_weather",
	" to=python", "<|constrain|>", "json", "<|message|>", "<|end|>", "<|call|>", "<|return|>", "{\"a\": 1}",
	"hello", " ", "\n", "<|", "<|en", "user", "é",
}

func FuzzHarmony(f *testing.F) {
	f.Add([]byte{2, 3, 10, 15, 11, 0, 1, 2, 4, 10, 15, 13}, uint64(1))
	f.Add([]byte{2, 5, 6, 8, 9, 10, 14, 12}, uint64(2))
	f.Fuzz(func(t *testing.T, recipe []byte, seed uint64) {
		if len(recipe) > 200 {
			return
		}
		text := recipeText(recipe, harmonyFuzzPieces)
		req := mustRequest(t, weatherTools)
		for _, cfg := range []Config{harmonyBoth, harmonyTool, harmonyReasn} {
			stream, batch := streamAndBatch(t, cfg, req, text, seed)
			if !reflect.DeepEqual(stream, batch) {
				t.Fatalf("%+v %q:\nstream %s\n batch %s", cfg, text, dump(stream), dump(batch))
			}
		}
	})
}

// recipeText joins the pieces a fuzz recipe picks.
func recipeText(recipe []byte, pieces []string) string {
	var sb strings.Builder
	for _, b := range recipe {
		sb.WriteString(pieces[int(b)%len(pieces)])
	}
	return sb.String()
}

// streamAndBatch runs text whole and in random pieces, both normalised.
func streamAndBatch(t *testing.T, cfg Config, req *Request, text string, seed uint64) (stream, batch Result) {
	b, _ := runSplits(t, cfg, req, text, nil)
	s, _ := runSplits(t, cfg, req, text, randomCuts(len(text), rand.New(rand.NewPCG(seed, 9))))
	return normalise(s), normalise(b)
}

// TestHarmonyStreamedArguments checks the streaming machine's re-serialised
// JSON arguments against the held body's json.dumps(json.loads(body)) (or
// the body itself when invalid), pushed a few bytes at a time with a save
// and restore before every push. An invalid body that did not go out
// unchanged is the one case the stream answers differently: it keeps the
// re-serialised prefix it sent.
func TestHarmonyStreamedArguments(t *testing.T) {
	for _, tc := range []struct {
		body  string
		exact bool
	}{
		{`{"location": "Tokyo", "days": 3}`, true},
		{`{"location":"Tokyo","u":[1,2.50,-1e-7,1E400],"o":{"k":null}}`, true},
		{`{"s": "a\"b\\c\u00e9\ud83d\ude00 \n <|x <b>"}`, true},
		{`  {"a": 1}  `, true},
		{`42`, true},
		{`"just a string"`, true},
		{`{"a": 1, "a": 2}`, true},
		{`{"a": `, true},
		{`{"a": 12`, true},
		{`{"a": 1} trailing`, true},
		{`{"a": 1}}`, true},
		{`{"a": tru}`, true},
		{`not json at all`, true},
		{`{"a":1,"b":2}`, true},
		{`{"a":1, "b": `, false},
		{`{"a":`, false},
		{`{"a":1} x`, false},
	} {
		text := "<|channel|>analysis<|message|>r<|end|><|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>" +
			tc.body + "<|call|>"
		batch := harmonyRun(t, text, 0)
		for _, size := range []int{1, 2, 3, 7} {
			got := harmonyRun(t, text, size)
			if tc.exact && got != batch {
				t.Errorf("%q in %d-byte pushes: arguments %q, want %q", tc.body, size, got, batch)
			}
			if !tc.exact && got == "" {
				t.Errorf("%q in %d-byte pushes: no arguments", tc.body, size)
			}
		}
	}
}

// harmonyRun returns the one call's arguments, batch (size 0) or streamed
// in size-byte pushes with a save and restore before each.
func harmonyRun(t *testing.T, text string, size int) string {
	t.Helper()
	req := mustRequest(t, weatherTools)
	p, err := New(harmonyBoth, testVocab, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	var acc Accumulator
	if size == 0 {
		acc.Add(pushDelta(p, text))
	} else {
		for i := 0; i < len(text); i += size {
			st := p.AppendState(nil)
			if p, err = Restore(harmonyBoth, testVocab, req, st); err != nil {
				t.Fatal(err)
			}
			p.SetStreaming()
			acc.Add(pushDelta(p, text[i:min(i+size, len(text))]))
		}
	}
	acc.Add(finishDelta(p))
	calls := acc.Calls()
	if len(calls) != 1 {
		t.Fatalf("%d calls for %q", len(calls), text)
	}
	return calls[0].Arguments
}
