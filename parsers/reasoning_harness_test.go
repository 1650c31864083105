package parsers

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/wire"
)

// reasoningVocab knows the marker tokens the reasoning parsers look up.
var reasoningVocab = fakeVocab{"<think>": 1, "</think>": 2, "[THINK]": 3, "[/THINK]": 4, "<tool_call>": 5,
	"<response>": 6, "</response>": 7}

// reasoningCase is one table case of a reasoning parser; a nil want is
// JSON null. src says where the expectation comes from: a vLLM test
// (tests/reasoning/test_<name>_reasoning_parser.py, constant name) or
// "derived" (worked out from vLLM's extract_reasoning code).
type reasoningCase struct {
	name    string
	parser  string
	kwargs  string
	text    string
	wantR   *string
	wantC   *string
	src     string
	include *bool
}

func (c reasoningCase) request(t testing.TB) *Request {
	req := &Request{IncludeReasoning: c.include}
	if c.kwargs != "" {
		n, err := wire.Parse([]byte(c.kwargs))
		if err != nil {
			t.Fatal(err)
		}
		req.ChatTemplateKwargs = n
	}
	return req
}

// parseReasoning feeds text cut at cuts through a fresh reasoning-only
// Parser and returns the answer and the raw accumulation.
func parseReasoning(t testing.TB, name string, req *Request, text string, cuts []int) (Result, *Accumulator) {
	p, err := New(Config{ReasoningParser: name}, reasoningVocab, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	acc := &Accumulator{}
	prev := 0
	for _, c := range cuts {
		acc.Add(pushDelta(p, text[prev:c]))
		prev = c
	}
	acc.Add(pushDelta(p, text[prev:]))
	acc.Add(finishDelta(p))
	return acc.Result(p, "stop"), acc
}

func showPtr(s *string) string {
	if s == nil {
		return "null"
	}
	b, _ := json.Marshal(*s)
	return string(b)
}

func samePtr(a, b *string) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// runReasoningCases checks each case batch, byte by byte and under 20
// random chunkings.
func runReasoningCases(t *testing.T, cases []reasoningCase) {
	r := rand.New(rand.NewPCG(12, 34))
	for _, c := range cases {
		t.Run(c.parser+"/"+c.name, func(t *testing.T) {
			req := c.request(t)
			batch, _ := parseReasoning(t, c.parser, req, c.text, nil)
			if !samePtr(batch.Reasoning, c.wantR) || !samePtr(batch.Content, c.wantC) {
				t.Fatalf("batch (%s): reasoning %s content %s, want %s %s", c.src,
					showPtr(batch.Reasoning), showPtr(batch.Content), showPtr(c.wantR), showPtr(c.wantC))
			}
			bytewise := make([]int, 0, len(c.text))
			for i := 1; i < len(c.text); i++ {
				bytewise = append(bytewise, i)
			}
			for k := 0; k < 21; k++ {
				cuts := bytewise
				if k > 0 {
					cuts = randomCuts(len(c.text), r)
				}
				got, _ := parseReasoning(t, c.parser, req, c.text, cuts)
				if !samePtr(got.Reasoning, c.wantR) || !samePtr(got.Content, c.wantC) {
					t.Fatalf("cuts %v: reasoning %s content %s, want %s %s", cuts,
						showPtr(got.Reasoning), showPtr(got.Content), showPtr(c.wantR), showPtr(c.wantC))
				}
			}
		})
	}
}

// fuzzReasoningPieces are fragments the fuzz target builds outputs from:
// every family's markers, some partial markers and plain text.
var fuzzReasoningPieces = []string{"<think>", "</think>", "<think>\n", "\n</think>\n<answer>\n", "\n</answer>",
	"[THINK]", "[/THINK]", "Here is my thought process:", "Here's my response:", "Here is my response:",
	"<response>", "</response>", "<tool_call>", "<|tool_calls_section_begin|>", "<minimax:tool_call>",
	"<seed:think>", "</seed:think>", "<seed:tool_call>", "</thi", "Here", "<", ">", "\n", " ", "text", "東京", "\t"}

// fuzzReasoningConfigs are the parsers (and kwargs) the fuzz target runs.
var fuzzReasoningConfigs = []struct{ parser, kwargs string }{
	{"deepseek_v3", `{"thinking":true}`}, {"deepseek_v3", ""}, {"step3", ""}, {"ernie45", ""},
	{"glm45", ""}, {"glm45", `{"enable_thinking":false}`}, {"kimi_k2", ""}, {"minimax_m2", ""},
	{"minimax_m2_append_think", ""}, {"seed_oss", ""}, {"mistral", ""}, {"granite", ""}, {"olmo3", ""},
	{"hunyuan_a13b", ""}, {"qwen3", ""}, {"qwen3", `{"enable_thinking":false}`}, {"deepseek_r1", ""},
	{"openai_gptoss", ""},
}

// droppedMarkers are markers a parser always removes: they never reach
// reasoning or content (reasoning-side only for the thinking family, whose
// content keeps later markers).
var droppedMarkers = map[string]struct{ reasoning, content []string }{
	"deepseek_v3": {reasoning: []string{"</think>"}},
	"step3":       {reasoning: []string{"</think>"}},
	"ernie45":     {reasoning: []string{"</think>"}},
	"glm45":       {reasoning: []string{"</think>", "<tool_call>"}, content: []string{"</think>", "<think>"}},
	"kimi_k2":     {reasoning: []string{"</think>", "<|tool_calls_section_begin|>"}, content: []string{"</think>"}},
	"minimax_m2":  {reasoning: []string{"</think>", "<minimax:tool_call>"}, content: []string{"</think>"}},
	"seed_oss":    {reasoning: []string{"</seed:think>", "<seed:tool_call>"}, content: []string{"</seed:think>"}},
	"mistral":     {reasoning: []string{"[/THINK]"}},
	"granite":     {reasoning: []string{"Here is my response:", "Here's my response:"}},
	"olmo3":       {reasoning: []string{"</think>"}},
	"qwen3":       {reasoning: []string{"</think>", "<tool_call>"}, content: []string{"</think>"}},
	"deepseek_r1": {reasoning: []string{"</think>"}},
	// Both of vLLM's regexes end reasoning at the first answer marker.
	"hunyuan_a13b": {reasoning: []string{hunyuanAnswer}},
}

func FuzzReasoningParsers(f *testing.F) {
	f.Add([]byte{0, 24, 1, 24}, uint64(1))
	f.Add([]byte{2, 24, 3, 24, 4}, uint64(2))
	f.Add([]byte{7, 24, 8, 10, 24, 11}, uint64(3))
	f.Fuzz(func(t *testing.T, recipe []byte, seed uint64) {
		var sb strings.Builder
		for _, b := range recipe {
			sb.WriteString(fuzzReasoningPieces[int(b)%len(fuzzReasoningPieces)])
		}
		text := sb.String()
		for _, fc := range fuzzReasoningConfigs {
			req := reasoningCase{kwargs: fc.kwargs}.request(t)
			batch, _ := parseReasoning(t, fc.parser, req, text, nil)
			stream, acc := parseReasoning(t, fc.parser, req, text, randomCuts(len(text), rand.New(rand.NewPCG(seed, 7))))
			if !samePtr(stream.Reasoning, batch.Reasoning) || !samePtr(stream.Content, batch.Content) {
				t.Fatalf("%s %q: stream %s %s, batch %s %s", fc.parser, text, showPtr(stream.Reasoning),
					showPtr(stream.Content), showPtr(batch.Reasoning), showPtr(batch.Content))
			}
			if fc.kwargs != "" && (fc.parser == "glm45" || fc.parser == "qwen3") { // thinking off: markers are content
				continue
			}
			d := droppedMarkers[fc.parser]
			for _, mk := range d.reasoning {
				if strings.Contains(acc.Reasoning(), mk) {
					t.Fatalf("%s %q: %q leaked into reasoning %q", fc.parser, text, mk, acc.Reasoning())
				}
			}
			for _, mk := range d.content {
				if strings.Contains(acc.Content(), mk) {
					t.Fatalf("%s %q: %q leaked into content %q", fc.parser, text, mk, acc.Content())
				}
			}
		}
	})
}

func TestReasoningParsersRegistered(t *testing.T) {
	for _, name := range []string{"deepseek_v3", "glm45", "kimi_k2", "granite", "mistral", "minimax_m2",
		"minimax_m2_append_think", "seed_oss", "step3", "hunyuan_a13b", "ernie45", "olmo3"} {
		if !HasReasoning(name) {
			t.Errorf("reasoning parser %q is not registered", name)
		}
	}
}
