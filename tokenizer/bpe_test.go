package tokenizer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

var whitespaceSplit = `{"type":"WhitespaceSplit"}`

// modelCases are the tokenizers of the model-level tests, named as in the
// tables.
func modelCases() map[string]testTokenizerJSON {
	priority := testBPE([]string{"a", "b", "c", "ab", "bc", "abc", "aa", "aaaa"},
		[]string{"b c", "a b", "a bc", "a a", "aa aa"}, nil)
	hello := []string{"h", "e", "l", "o", "he", "ll", "hell", "hello"}
	helloMerges := []string{"h e", "l l", "he ll"}
	return map[string]testTokenizerJSON{
		"priority": {preTokenizer: whitespaceSplit, model: priority},
		"fallback": {preTokenizer: whitespaceSplit, model: testBPE(
			[]string{"a", "<unk>", "<0xC3>", "<0xA9>", "<0xE2>", "<0x82>"}, []string{},
			map[string]any{"unk_token": "<unk>", "byte_fallback": true, "fuse_unk": true})},
		"nofuse": {preTokenizer: whitespaceSplit, model: testBPE([]string{"a", "<unk>"}, []string{},
			map[string]any{"unk_token": "<unk>"})},
		"dropchars":    {preTokenizer: whitespaceSplit, model: testBPE([]string{"a", "b"}, []string{}, nil)},
		"ignoremerges": {preTokenizer: whitespaceSplit, model: testBPE(hello, helloMerges, map[string]any{"ignore_merges": true})},
		"noignore":     {preTokenizer: whitespaceSplit, model: testBPE(hello, helloMerges, nil)},
		"prefix": {preTokenizer: whitespaceSplit, model: testBPE([]string{"u", "##n", "##i", "un", "uni", "x"},
			[]string{"u ##n", "un ##i"}, map[string]any{"continuing_subword_prefix": "##"})},
		"suffix": {preTokenizer: whitespaceSplit, model: testBPE([]string{"l", "o", "w</w>", "lo", "low</w>", "w"},
			[]string{"l o", "lo w</w>"}, map[string]any{"end_of_word_suffix": "</w>"})},
		"pairmerges": {model: testBPE([]string{"a", " b", "a b"}, [][]string{{"a", " b"}}, nil)},
	}
}

func TestBPEModel(t *testing.T) {
	tests := []struct {
		model, in string
		want      []int
	}{
		{"priority", "abc aaaaa abab cab", []int{5, 7, 0, 3, 3, 2, 3}},
		{"fallback", "aéa üüa üéa €", []int{0, 2, 3, 0, 1, 0, 2, 3, 1, 0, 1}},
		{"nofuse", "üüa aü", []int{1, 1, 0, 0, 1}},
		{"dropchars", "aüb", []int{0, 1}},
		{"ignoremerges", "hello hell helo", []int{7, 6, 4, 2, 3}},
		{"noignore", "hello hell helo", []int{6, 3, 6, 4, 2, 3}},
		{"prefix", "uni unx nu", []int{4, 3}},
		{"suffix", "low lo w", []int{4, 0, 2}},
		{"pairmerges", "a b", []int{0}},
	}
	models := modelCases()
	for _, tc := range tests {
		t.Run(tc.model+"/"+tc.in, func(t *testing.T) {
			tok := models[tc.model].build(t)
			// Twice: the second run is served by the word cache.
			for range 2 {
				if got := tok.Encode(tc.in, false); !slices.Equal(got, tc.want) {
					t.Fatalf("Encode(%q) = %v, want %v", tc.in, got, tc.want)
				}
			}
		})
	}
}

func TestBPEModelErrors(t *testing.T) {
	tests := []struct {
		name    string
		model   map[string]any
		wantErr string
	}{
		{"merge token missing", testBPE([]string{"a", "b"}, []string{"a c"}, nil), `token "c" is not in the vocabulary`},
		{"merged token missing", testBPE([]string{"a", "b"}, []string{"a b"}, nil), `merged token "ab" is not in the vocabulary`},
		{"bad legacy merge", testBPE([]string{"a", "b"}, []string{"a b c"}, nil), "not two tokens"},
		{"dropout", testBPE([]string{"a"}, []string{}, map[string]any{"dropout": 0.1}), "dropout"},
		{"other model", map[string]any{"type": "WordPiece", "vocab": map[string]int{"a": 0}}, `unsupported type "WordPiece"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := `{"version":"1.0","added_tokens":[],"normalizer":null,"pre_tokenizer":null,"post_processor":null,"decoder":null,"model":` +
				testenv.MustJSON(t, tc.model) + `}`
			_, err := Parse([]byte(data))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

// TestMergeHeapMatchesScan checks that the heap used for long words and the
// scan used for short ones apply merges in the same order.
func TestMergeHeapMatchesScan(t *testing.T) {
	vocab := []string{"a", "b", "c"}
	var merges []string
	rng := rand.New(rand.NewPCG(1, 1))
	known := map[string]bool{"a": true, "b": true, "c": true}
	for len(vocab) < 60 {
		l, r := vocab[rng.IntN(len(vocab))], vocab[rng.IntN(len(vocab))]
		if known[l+r] || len(l+r) > 6 {
			continue
		}
		known[l+r] = true
		vocab = append(vocab, l+r)
		merges = append(merges, l+" "+r)
	}
	tok := testTokenizerJSON{model: testBPE(vocab, merges, nil)}.build(t)
	m := tok.model
	for i := 0; i < 500; i++ {
		n := 2 + rng.IntN(120)
		word := make([]int32, n)
		for j := range word {
			word[j] = int32(rng.IntN(3))
		}
		small := m.mergeSmall(slices.Clone(word), &bpeScratch{})
		heap := m.mergeHeap(slices.Clone(word), &bpeScratch{})
		if !slices.Equal(small, heap) {
			t.Fatalf("word %v: scan %v, heap %v", word, small, heap)
		}
	}
}

// TestCutWordsMatchWholeWords checks the SentencePiece-style optimisation
// of cutting long words before "▁" (computeBoundary) against BPE over the
// whole word, on a vocabulary where one token spans such a cut.
func TestCutWordsMatchWholeWords(t *testing.T) {
	vocab := []string{"▁", "a", "b", ">", "<", "▁a", "a▁", "▁▁", ">▁", "b▁a", "ab", "▁ab"}
	merges := []string{"▁ a", "▁ ▁", "> ▁", "a b", "▁ ab", "a ▁"}
	tok := testTokenizerJSON{model: testBPE(vocab, merges, nil)}.build(t)
	m := tok.model
	if m.boundaryRune != '▁' {
		t.Fatalf("boundary rune %q, want ▁", m.boundaryRune)
	}
	rng := rand.New(rand.NewPCG(2, 2))
	alphabet := []string{"▁", "a", "b", ">", "<", "c"}
	for i := 0; i < 500; i++ {
		var b strings.Builder
		for n := rng.IntN(40); n >= 0; n-- {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		word := b.String()
		got := m.tokenizeCut(word, nil, &bpeScratch{})
		want := m.mergeWord(word, false, newWordCache(), nil, &bpeScratch{})
		if !slices.Equal(got, want) {
			t.Fatalf("%q: cut %v, whole %v", word, got, want)
		}
	}
}
