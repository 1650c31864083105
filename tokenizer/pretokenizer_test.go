package tokenizer

import (
	"slices"
	"testing"
)

// preTokenizeStrings runs the pre-tokenizer chain of tok over text and
// returns the pieces as the reference's pre_tokenize_str shows them, with
// the byte-level mapping applied.
func preTokenizeStrings(tok *Tokenizer, text string) []string {
	var out []string
	sc := &encodeScratch{collect: func(p piece) {
		if p.byteLevel {
			out = append(out, byteLevelEncode(p.s))
		} else {
			out = append(out, p.s)
		}
	}}
	tok.preTokenize(0, piece{s: text, origin: true}, nil, sc)
	return out
}

func TestPreTokenizers(t *testing.T) {
	tests := []struct {
		name, json, in string
		want           []string
	}{
		{"Split Removed", "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"\\\\d+\"},\"behavior\":\"Removed\",\"invert\":false}", "ab12cd345 e6", []string{"ab", "cd", " e"}},
		{"Split Isolated", "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"\\\\d+\"},\"behavior\":\"Isolated\",\"invert\":false}", "ab12cd345 e6", []string{"ab", "12", "cd", "345", " e", "6"}},
		{"Split MergedWithPrevious", "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"\\\\d+\"},\"behavior\":\"MergedWithPrevious\",\"invert\":false}", "ab12cd345 e6", []string{"ab12", "cd345", " e6"}},
		{"Split MergedWithNext", "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"\\\\d+\"},\"behavior\":\"MergedWithNext\",\"invert\":false}", "ab12cd345 e6", []string{"ab", "12cd", "345 e", "6"}},
		{"Split Contiguous", "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"\\\\d\"},\"behavior\":\"Contiguous\",\"invert\":false}", "ab12cd345 e6", []string{"ab", "12", "cd", "345", " e", "6"}},
		{"Split invert Removed", "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"\\\\d+\"},\"behavior\":\"Removed\",\"invert\":true}", "ab12cd345 e6", []string{"12", "345", "6"}},
		{"Split invert Isolated", "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"\\\\d+\"},\"behavior\":\"Isolated\",\"invert\":true}", "ab12cd345 e6", []string{"ab", "12", "cd", "345", " e", "6"}},
		{"Split string MergedWithNext", "{\"type\":\"Split\",\"pattern\":{\"String\":\"-\"},\"behavior\":\"MergedWithNext\",\"invert\":false}", "a-b--c-", []string{"a", "-b", "-", "-c", "-"}},
		{"Split string MergedWithPrevious", "{\"type\":\"Split\",\"pattern\":{\"String\":\"-\"},\"behavior\":\"MergedWithPrevious\",\"invert\":false}", "-a-b--c", []string{"-", "a-", "b-", "-", "c"}},
		{"Split lookahead regex", "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"\\\\s+(?!\\\\S)|\\\\s+\"},\"behavior\":\"Isolated\",\"invert\":false}", "a   b \n c  ", []string{"a", "  ", " ", "b", " \n", " ", "c", "  "}},
		{"Split unicode classes", "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"\\\\p{L}+|\\\\p{N}+\"},\"behavior\":\"Isolated\",\"invert\":false}", "héllo٣٤ wörld①", []string{"héllo", "٣٤", " ", "wörld", "①"}},
		{"ByteLevel with regex and prefix space", "{\"type\":\"ByteLevel\",\"add_prefix_space\":true,\"trim_offsets\":true,\"use_regex\":true}", "Hello world's   123!! é", []string{"ĠHello", "Ġworld", "'s", "ĠĠ", "Ġ123", "!!", "ĠÃ©"}},
		{"ByteLevel no regex no prefix", "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":true,\"use_regex\":false}", "Hello wörld", []string{"HelloĠwÃ¶rld"}},
		{"ByteLevel keeps existing space", "{\"type\":\"ByteLevel\",\"add_prefix_space\":true,\"trim_offsets\":true,\"use_regex\":false}", " x", []string{"Ġx"}},
		{"Metaspace always", "{\"type\":\"Metaspace\",\"replacement\":\"▁\",\"prepend_scheme\":\"always\",\"split\":true}", "Hello  world", []string{"▁Hello", "▁", "▁world"}},
		{"Metaspace first", "{\"type\":\"Metaspace\",\"replacement\":\"▁\",\"prepend_scheme\":\"first\",\"split\":true}", "Hello world", []string{"▁Hello", "▁world"}},
		{"Metaspace never no split", "{\"type\":\"Metaspace\",\"replacement\":\"▁\",\"prepend_scheme\":\"never\",\"split\":false}", "Hello world", []string{"Hello▁world"}},
		{"Metaspace legacy add_prefix_space", "{\"type\":\"Metaspace\",\"replacement\":\"▁\",\"add_prefix_space\":true}", " a b", []string{"▁a", "▁b"}},
		{"Digits contiguous", "{\"type\":\"Digits\",\"individual_digits\":false}", "abc123def4", []string{"abc", "123", "def", "4"}},
		{"Digits individual", "{\"type\":\"Digits\",\"individual_digits\":true}", "abc123def4", []string{"abc", "1", "2", "3", "def", "4"}},
		{"Whitespace", "{\"type\":\"Whitespace\"}", "Hello, world! foo_bar   x…", []string{"Hello", ",", "world", "!", "foo_bar", "x", "…"}},
		{"WhitespaceSplit", "{\"type\":\"WhitespaceSplit\"}", "a  b\tc\n d", []string{"a", "b", "c", "d"}},
		{"Punctuation", "{\"type\":\"Punctuation\",\"behavior\":\"Isolated\"}", "Hi, there!... ok?$", []string{"Hi", ",", " there", "!", ".", ".", ".", " ok", "?", "$"}},
		{"Punctuation contiguous", "{\"type\":\"Punctuation\",\"behavior\":\"Contiguous\"}", "Hi, there!... ok?", []string{"Hi", ",", " there", "!...", " ok", "?"}},
		{"BertPreTokenizer", "{\"type\":\"BertPreTokenizer\"}", "Hello, world!  a+b", []string{"Hello", ",", "world", "!", "a", "+", "b"}},
		{"CharDelimiterSplit", "{\"type\":\"CharDelimiterSplit\",\"delimiter\":\"|\"}", "a|b||c", []string{"a", "b", "c"}},
		{"Sequence WhitespaceSplit Digits", "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"WhitespaceSplit\"},{\"type\":\"Digits\",\"individual_digits\":true}]}", "ab12 c3", []string{"ab", "1", "2", "c", "3"}},
		{"Sequence Split ByteLevel", "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":{\"Regex\":\"(?i:'s|'t)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+\"},\"behavior\":\"Isolated\",\"invert\":false},{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":false,\"use_regex\":false}]}", "It'S 42 héllo\n\n  world!!", []string{"It", "'S", "Ġ", "4", "2", "ĠhÃ©llo", "ĊĊ", "Ġ", "Ġworld", "!!"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tok := testTokenizerJSON{preTokenizer: tc.json}.build(t)
			if got := preTokenizeStrings(tok, tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("pre-tokenize(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestSplitFallbackMatchesFastPath checks that the regexp2 fallback and the
// hand-written scanners agree on the patterns both can run.
func TestSplitFallbackMatchesFastPath(t *testing.T) {
	patterns := []string{
		`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
		gpt2Pattern,
		`\p{N}{1,3}`,
	}
	inputs := []string{
		"Hello world's   123!! é\n\n  x", "I'M fine, they'LL see 1234567", "  \t\n leading and trailing  \n",
		"日本語 テキスト 中文", "emoji 😀👍🏽 ok", "a\u00a0b\u2003c\u3000d", "",
	}
	for _, p := range patterns {
		fast, ok := lookupFastSplit(p)
		if !ok {
			t.Fatalf("no fast scanner for %q", p)
		}
		slow, err := newRegexMatcher(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range inputs {
			if got, want := slow.find(in, nil), fast.find(in, nil); !slices.Equal(got, want) {
				t.Errorf("pattern %q on %q: regexp2 %v, scanner %v", p, in, got, want)
			}
		}
	}
}

func TestRegexMatcherEmptyMatches(t *testing.T) {
	// Oniguruma's find_iter skips an empty match right after a match.
	m, err := newRegexMatcher(`a*`)
	if err != nil {
		t.Fatal(err)
	}
	got := m.find("baab", nil)
	want := []int{0, 0, 1, 3, 4, 4}
	if !slices.Equal(got, want) {
		t.Errorf("find = %v, want %v", got, want)
	}
}

func TestPreTokenizerErrors(t *testing.T) {
	tests := []struct{ name, json, wantErr string }{
		{"unknown type", `{"type":"UnicodeScripts"}`, `unknown pre-tokenizer type "UnicodeScripts"`},
		{"unknown nested type", `{"type":"Sequence","pretokenizers":[{"type":"Digits"},{"type":"Nope"}]}`, `sequence item 1: unknown pre-tokenizer type "Nope"`},
		{"bad behavior", `{"type":"Split","pattern":{"String":" "},"behavior":"Sideways","invert":false}`, `unknown split behavior "Sideways"`},
		{"bad prepend scheme", `{"type":"Metaspace","replacement":"_","prepend_scheme":"sometimes"}`, `unknown prepend_scheme "sometimes"`},
		{"two-rune replacement", `{"type":"Metaspace","replacement":"__"}`, "not one character"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := buildPreTokenizer([]byte(tc.json))
			if err == nil || !contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}
