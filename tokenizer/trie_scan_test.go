package tokenizer

import (
	"slices"
	"strings"
	"testing"
)

type trieMatch struct {
	start, end int
	id         int32
}

// walkMatches are t's matches in s found by the table walk, the reference
// for trieScan.
func walkMatches(t *tokenTrie, s string) []trieMatch {
	var out []trieMatch
	for from := 0; ; {
		st, en, id := t.next(s, from)
		if st < 0 {
			return out
		}
		out = append(out, trieMatch{st, en, id})
		from = en
	}
}

func scanMatches(t *tokenTrie, s string) []trieMatch {
	var out []trieMatch
	sc := t.scan(s)
	for from := 0; ; {
		st, en, id := sc.next(from)
		if st < 0 {
			return out
		}
		out = append(out, trieMatch{st, en, id})
		from = en
	}
}

// scanTries are tries with one first byte, several, and more than
// maxFirsts (the table walk's fallback).
var scanTries = map[string][]triePattern{
	"one first byte": {{"<|im_start|>", 1}, {"<|im_end|>", 2}, {"<think>", 3}, {"</think>", 4}, {"<", 5}},
	"several":        {{"ab", 1}, {"abcd", 2}, {"bc", 3}, {"x", 4}, {"abc", 5}, {"\n\n", 6}, {"▁▁", 7}},
	"over maxFirsts": {{"a", 1}, {"b", 2}, {"c", 3}, {"d", 4}, {"e", 5}, {"f", 6}, {"g", 7}, {"hh", 8}},
}

func TestTrieScanMatchesWalk(t *testing.T) {
	texts := []string{
		"", "<", "<<", "<|im_start|>user\nhi<|im_end|>\n<think>\n</think>\n", "<|im_sta", "x<|im_end|",
		"zabcdabcbcxab", "a\n\n\n▁▁▁b", "hhh abcdefg", strings.Repeat("<th", 100) + "<think>",
	}
	for name, pats := range scanTries {
		trie := newTokenTrie(pats)
		if wantFirsts := name != "over maxFirsts"; (trie.firsts != nil) != wantFirsts {
			t.Fatalf("%s: firsts = %q", name, trie.firsts)
		}
		for _, s := range texts {
			if got, want := scanMatches(trie, s), walkMatches(trie, s); !slices.Equal(got, want) {
				t.Errorf("%s: %q: scan %v, walk %v", name, s, got, want)
			}
		}
	}
}

// FuzzTrieScan holds trieScan to the table walk on any text, for tries
// with one and with several first bytes.
func FuzzTrieScan(f *testing.F) {
	for _, s := range []string{"<|im_start|>user\n<think></think>", "abcd\n\n▁▁x", "<<|im_end|><"} {
		f.Add(s)
	}
	tries := make([]*tokenTrie, 0, len(scanTries))
	for _, pats := range scanTries {
		tries = append(tries, newTokenTrie(pats))
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, trie := range tries {
			if got, want := scanMatches(trie, s), walkMatches(trie, s); !slices.Equal(got, want) {
				t.Fatalf("%q: scan %v, walk %v", s, got, want)
			}
		}
	})
}
