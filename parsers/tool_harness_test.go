package parsers

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// The harness every tool family's table runs through: a case is a
// request, an output and vLLM's answer; each is checked batch, byte by byte
// and in random chunkings, and a family's fuzz target streams random
// outputs built from its pieces against the batch answer.

// toolCase is one table case for a tool parser.
type toolCase struct {
	name string
	req  string
	text string
	want Result
}

// runToolCases checks each case batch, byte by byte and under 20 random
// chunkings.
func runToolCases(t *testing.T, cfg Config, seed uint64, cases []toolCase) {
	r := rand.New(rand.NewPCG(seed, seed+1))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkToolCase(t, r, cfg, mustRequest(t, tc.req), tc.text, tc.want)
		})
	}
}

// fuzzToolParser builds an output from pieces by recipe and checks that a
// random chunking of whole characters streams to the batch answer, and
// that no marker leaks into content next to returned calls.
func fuzzToolParser(t *testing.T, cfg Config, pieces []string, markers []string, recipe []byte, seed uint64) {
	text, ok := fuzzText(recipe, pieces)
	if !ok {
		return
	}
	// Pushes carry whole characters (the detokenizer holds split ones).
	var cuts []int
	for _, c := range fuzzCuts(text, seed) {
		if utf8.RuneStart(text[c]) {
			cuts = append(cuts, c)
		}
	}
	batch, acc := streamAgrees(t, cfg, mustRequest(t, weatherTools), text, cuts)
	if len(batch.ToolCalls) == 0 {
		return
	}
	for _, m := range markers {
		if strings.Contains(acc.Content(), m) {
			t.Fatalf("%q: marker %q leaked into content %q", text, m, acc.Content())
		}
	}
}

// fuzzText joins pieces as recipe picks them; false for a recipe too long
// to be worth a run.
func fuzzText(recipe []byte, pieces []string) (string, bool) {
	if len(recipe) > 200 {
		return "", false
	}
	var sb strings.Builder
	for _, b := range recipe {
		sb.WriteString(pieces[int(b)%len(pieces)])
	}
	return sb.String(), true
}

// fuzzCuts is the random chunking seed picks for text.
func fuzzCuts(text string, seed uint64) []int {
	return randomCuts(len(text), rand.New(rand.NewPCG(seed, 9)))
}

// streamAgrees parses text in one push and split at cuts, fails unless both
// answer the same, and returns the batch answer and the stream's deltas.
func streamAgrees(t *testing.T, cfg Config, req *Request, text string, cuts []int) (Result, Accumulator) {
	t.Helper()
	batch, _ := runSplits(t, cfg, req, text, nil)
	stream, acc := runSplits(t, cfg, req, text, cuts)
	if !reflect.DeepEqual(normalise(stream), normalise(batch)) {
		t.Fatalf("%+v %q:\nstream %s\n batch %s", cfg, text, dump(stream), dump(batch))
	}
	return batch, acc
}

// checkToolCase runs text batch, byte by byte and in 20 random chunkings.
func checkToolCase(t *testing.T, r *rand.Rand, cfg Config, req *Request, text string, want Result) {
	t.Helper()
	checkToolCaseWith(t, r, testVocab, cfg, req, text, want)
}

// checkToolCaseWith is checkToolCase with the vocabulary v.
func checkToolCaseWith(t *testing.T, r *rand.Rand, v Vocab, cfg Config, req *Request, text string, want Result) {
	t.Helper()
	batch, _ := runSplitsWith(t, v, cfg, req, text, nil)
	if got, w := normalise(batch), normalise(want); !reflect.DeepEqual(got, w) {
		t.Fatalf("batch:\n got %s\nwant %s", dump(got), dump(w))
	}
	bytewise := make([]int, 0, len(text))
	for i := 1; i < len(text); i++ {
		bytewise = append(bytewise, i)
	}
	for k := 0; k < 21; k++ {
		cuts := bytewise
		if k > 0 {
			cuts = randomCuts(len(text), r)
		}
		got, _ := runSplitsWith(t, v, cfg, req, text, cuts)
		if !reflect.DeepEqual(normalise(got), normalise(batch)) {
			t.Fatalf("cuts %v:\n got %s\nwant %s", cuts, dump(got), dump(batch))
		}
	}
}

// argsCallsTools is a request with tools whose calls the cases make.
const argsCallsTools = `{"tools":[{"type":"function","function":{"name":"get_weather"}},{"type":"function","function":{"name":"get_time"}}]}`
