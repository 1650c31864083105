package tokenizer

import (
	"slices"
	"testing"
)

// addedTokenizer has a one-character-per-token ASCII model (' ' is 0, 'a'
// is 65) under a Lowercase normalizer, and added tokens with every option.
func addedTokenizer(t *testing.T) *Tokenizer {
	t.Helper()
	added := []AddedToken{
		{ID: 95, Content: "<s>", Special: true},
		{ID: 96, Content: "<s>x"},
		{ID: 97, Content: "[LS]", LStrip: true, Special: true},
		{ID: 98, Content: "[RS]", RStrip: true, Special: true},
		{ID: 99, Content: "word", SingleWord: true},
		{ID: 100, Content: "hello", Normalized: true},
		// Already in the model vocabulary: it keeps the model's id 65, not 101.
		{ID: 101, Content: "a", Special: true},
	}
	return testTokenizerJSON{
		normalizer: `{"type":"Lowercase"}`,
		model:      testBPE(asciiVocab(), []string{}, nil),
		added:      added,
	}.build(t)
}

func TestAddedTokensEncode(t *testing.T) {
	tests := []struct {
		name, in string
		want     []int
	}{
		{"special token", "a <s> b", []int{65, 0, 95, 0, 66}},
		{"leftmost longest, case sensitive raw match", "c <s>x <S> d", []int{67, 0, 96, 0, 28, 83, 30, 0, 68}},
		{"lstrip eats the spaces before", "c  [LS] d", []int{67, 97, 0, 68}},
		{"lstrip does not reach into a previous token", "[LS][LS]  [LS]", []int{97, 97, 97}},
		{"rstrip eats the spaces after", "c [RS]  d", []int{67, 0, 98, 68}},
		{"single_word needs word boundaries", "cword d word, words", []int{67, 87, 79, 82, 68, 0, 68, 0, 99, 12, 0, 87, 79, 82, 68, 83}},
		{"normalized token matches the normalized text", "HELLO there hello", []int{100, 0, 84, 72, 69, 82, 69, 0, 100}},
		{"added token alone", "<s>", []int{95}},
		{"empty text", "", []int{}},
	}
	tok := addedTokenizer(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tok.Encode(tc.in, true); !slices.Equal(got, tc.want) {
				t.Errorf("Encode(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestAddedTokensDecode(t *testing.T) {
	tok := addedTokenizer(t)
	ids := []int{95, 2, 96, 97, 100, 101, 68, 94}
	if got, want := tok.Decode(ids, false), `<s> " <s>x [LS] hello d ~`; got != want {
		t.Errorf("Decode(skip=false) = %q, want %q", got, want)
	}
	if got, want := tok.Decode(ids, true), `" <s>x hello d ~`; got != want {
		t.Errorf("Decode(skip=true) = %q, want %q", got, want)
	}
}

func TestAddedTokensAPI(t *testing.T) {
	tok := addedTokenizer(t)
	if got := tok.Len(); got != 101 {
		t.Errorf("Len() = %d, want 101", got)
	}
	for _, tc := range []struct {
		id      int
		special bool
	}{{95, true}, {96, false}, {65, true}, {101, false}, {0, false}, {-1, false}} {
		if got := tok.IsSpecial(tc.id); got != tc.special {
			t.Errorf("IsSpecial(%d) = %v, want %v", tc.id, got, tc.special)
		}
	}
	if got, want := tok.SpecialTokens(), []string{"<s>", "[LS]", "[RS]", "a"}; !slices.Equal(got, want) {
		t.Errorf("SpecialTokens() = %q, want %q", got, want)
	}
	if id, ok := tok.TokenToID("<s>x"); !ok || id != 96 {
		t.Errorf("TokenToID(<s>x) = %d, %v", id, ok)
	}
	if id, ok := tok.TokenToID("a"); !ok || id != 65 {
		t.Errorf("TokenToID(a) = %d, %v", id, ok)
	}
	if _, ok := tok.TokenToID("nope"); ok {
		t.Error("TokenToID(nope) found")
	}
	if s, ok := tok.IDToToken(97); !ok || s != "[LS]" {
		t.Errorf("IDToToken(97) = %q, %v", s, ok)
	}
	if _, ok := tok.IDToToken(101); ok {
		t.Error("IDToToken(101) found: the token took the model's id")
	}
	added := tok.AddedTokens()
	if len(added) != 7 || added[0].Content != "<s>" || added[6].ID != 65 {
		t.Errorf("AddedTokens() = %+v", added)
	}
	added[0].Content = "changed"
	if tok.AddedTokens()[0].Content != "<s>" {
		t.Error("AddedTokens returned the tokenizer's own slice")
	}
}

// TestNormalizedAddedTokenDecodesNormalized: HF decodes a normalized added
// token to its normalized form (its normalized_cache).
func TestNormalizedAddedTokenDecodesNormalized(t *testing.T) {
	tok := testTokenizerJSON{
		normalizer: `{"type":"Replace","pattern":{"String":" "},"content":"▁"}`,
		model:      testBPE([]string{"▁", "x", "y", "z"}, []string{}, nil),
		added:      []AddedToken{{ID: 4, Content: "x y", Normalized: true, Special: true}},
	}.build(t)
	if got, want := tok.Encode("z x y z", false), []int{3, 0, 4, 0, 3}; !slices.Equal(got, want) {
		t.Errorf("Encode = %v, want %v", got, want)
	}
	if got, want := tok.Decode([]int{3, 4, 0}, false), "z x▁y ▁"; got != want {
		t.Errorf("Decode = %q, want %q", got, want)
	}
	if s, ok := tok.IDToToken(4); !ok || s != "x▁y" {
		t.Errorf("IDToToken(4) = %q, %v", s, ok)
	}
}

func TestTokenTrieLeftmostLongest(t *testing.T) {
	trie := newTokenTrie([]triePattern{{"ab", 1}, {"abcd", 2}, {"bc", 3}, {"x", 4}, {"abc", 5}})
	type match struct {
		start, end int
		id         int32
	}
	var got []match
	s := "zabcdabcbcxab"
	for from := 0; ; {
		st, en, id := trie.next(s, from)
		if st < 0 {
			break
		}
		got = append(got, match{st, en, id})
		from = en
	}
	want := []match{{1, 5, 2}, {5, 8, 5}, {8, 10, 3}, {10, 11, 4}, {11, 13, 1}}
	if !slices.Equal(got, want) {
		t.Errorf("matches = %v, want %v", got, want)
	}
}
