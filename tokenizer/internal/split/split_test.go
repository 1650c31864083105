package split

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// matchedPieces returns the substrings f matches in s.
func matchedPieces(f Func, s string) []string {
	var out []string
	offsets := f(s, nil)
	for i := 0; i < len(offsets); i += 2 {
		out = append(out, s[offsets[i]:offsets[i+1]])
	}
	return out
}

func TestScanners(t *testing.T) {
	tests := []struct {
		name, pattern, in string
		want              []string
	}{
		{"qwen3 contraction", Qwen3Pattern, "I'm here", []string{"I", "'m", " here"}},
		{"qwen3 upper-case contraction", Qwen3Pattern, "YOU'RE", []string{"YOU", "'RE"}},
		{"qwen3 long s folds to s", Qwen3Pattern, "it'ſ", []string{"it", "'ſ"}},
		{"qwen3 Kelvin sign is a letter, not a contraction", Qwen3Pattern, "it'\u212a", []string{"it", "'\u212a"}},
		{"qwen3 contraction cuts a word", Qwen3Pattern, "'Sx", []string{"'S", "x"}},
		{"qwen3 two-letter contraction needs both", Qwen3Pattern, "'rx", []string{"'rx"}},
		{"qwen3 single digits", Qwen3Pattern, "2024", []string{"2", "0", "2", "4"}},
		{"qwen3 non-ASCII digit", Qwen3Pattern, "x٣²", []string{"x", "٣", "²"}},
		{"qwen3 space prefixes word", Qwen3Pattern, "a b", []string{"a", " b"}},
		{"qwen3 space run leaves one", Qwen3Pattern, "a   b", []string{"a", "  ", " b"}},
		{"qwen3 trailing spaces", Qwen3Pattern, "a  ", []string{"a", "  "}},
		{"qwen3 newlines", Qwen3Pattern, "a\n\n b", []string{"a", "\n\n", " b"}},
		{"qwen3 spaces and newlines up to the last newline", Qwen3Pattern, "a  \n  \nb", []string{"a", "  \n  \n", "b"}},
		{"qwen3 punctuation takes newlines", Qwen3Pattern, "a.\r\n\nb", []string{"a", ".\r\n\n", "b"}},
		{"qwen3 space prefixes punctuation", Qwen3Pattern, "a ...", []string{"a", " ..."}},
		{"qwen3 tab prefixes word", Qwen3Pattern, "\tfoo", []string{"\tfoo"}},
		{"qwen3 no-break space prefixes word", Qwen3Pattern, "\u00a0foo", []string{"\u00a0foo"}},
		{"qwen3 CR does not prefix word", Qwen3Pattern, "\rfoo", []string{"\r", "foo"}},
		{"qwen3 punctuation prefixes word", Qwen3Pattern, "(foo)", []string{"(foo", ")"}},
		{"qwen3 ideographic space run", Qwen3Pattern, "\u3000\u3000x", []string{"\u3000", "\u3000x"}},
		{"cl100k digits in threes", Cl100kPattern, "1234567", []string{"123", "456", "7"}},
		{"cl100k space before digits is separate", Cl100kPattern, "a 12", []string{"a", " ", "12"}},
		{"o200k camel case", O200kPattern, "iPhoneHTTPServer", []string{"i", "Phone", "HTTPServer"}},
		{"o200k contraction stays on word", O200kPattern, "John's", []string{"John's"}},
		{"o200k upper-case word with contraction", O200kPattern, "JOHN'S", []string{"JOHN'S"}},
		{"o200k mark before capital stands alone", O200kPattern, "\u0301A", []string{"\u0301", "A"}},
		{"o200k space prefixes capitalised word", O200kPattern, " Hello", []string{" Hello"}},
		{"o200k digits in threes", O200kPattern, "12345", []string{"123", "45"}},
		{"o200k punctuation takes slashes and newlines", O200kPattern, "a/\n/b", []string{"a", "/\n/", "b"}},
		{"deepseek punctuation then ASCII letters", DeepSeekWordsPattern, "'hello", []string{"'hello"}},
		{"deepseek punctuation takes ASCII letters only", DeepSeekWordsPattern, "'héllo", []string{"'h", "éllo"}},
		{"deepseek digit prefixes letters", DeepSeekWordsPattern, "1abc", []string{"1abc"}},
		{"deepseek lone digits are not matched", DeepSeekWordsPattern, "12 ab", []string{" ab"}},
		{"deepseek marks join letters", DeepSeekWordsPattern, "e\u0301t\u0301", []string{"e\u0301t\u0301"}},
		{"deepseek symbols and punctuation together", DeepSeekWordsPattern, "a +=\n", []string{"a", " +=\n"}},
		{"deepseek digits in threes", DeepSeekDigitsPattern, "a12345b6", []string{"123", "45", "6"}},
		{"deepseek kana and ideographs", DeepSeekCJKPattern, "中文abcカタカナ\u9fa6一", []string{"中文", "カタカナ", "一"}},
		{"bytelevel contractions are case-sensitive", ByteLevelPattern, "I'M", []string{"I", "'", "M"}},
		{"bytelevel space prefixes digits", ByteLevelPattern, "a 123", []string{"a", " 123"}},
		{"bytelevel newlines are plain whitespace", ByteLevelPattern, "a\n\nb", []string{"a", "\n", "\n", "b"}},
		{"bytelevel space run leaves one", ByteLevelPattern, "a   b", []string{"a", "  ", " b"}},
		{"bytelevel empty input", ByteLevelPattern, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ok := Lookup(tt.pattern)
			if !ok {
				t.Fatalf("no scanner for %q", tt.pattern)
			}
			if got := matchedPieces(f, tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("%q: got %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestLookupUnknown(t *testing.T) {
	for _, p := range []string{"", `\s+`, Qwen3Pattern + " ", `\p{N}{1,2}`} {
		if _, ok := Lookup(p); ok {
			t.Errorf("Lookup(%q) found a scanner", p)
		}
	}
}

// TestAppendsToDst checks that matches are appended after existing entries.
func TestAppendsToDst(t *testing.T) {
	f, _ := Lookup(Qwen3Pattern)
	got := f("a b", []int{7, 8})
	if want := []int{7, 8, 0, 1, 1, 3}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestModelPatterns checks that the Split patterns of the cached models'
// tokenizer.json are exactly the registered ones.
func TestModelPatterns(t *testing.T) {
	tests := []struct {
		model string
		want  []string
	}{
		{"qwen3", []string{Qwen3Pattern}},
		{"llama3_1", []string{Cl100kPattern}},
		{"gptoss", []string{O200kPattern}},
		{"deepseek_v3", []string{DeepSeekDigitsPattern, DeepSeekCJKPattern, DeepSeekWordsPattern}},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(testenv.ModelDir(t, tt.model), "tokenizer.json"))
			if err != nil {
				t.Fatal(err)
			}
			var tok struct {
				PreTokenizer preTokenizer `json:"pre_tokenizer"`
			}
			if err := json.Unmarshal(data, &tok); err != nil {
				t.Fatalf("%s tokenizer.json: %v", tt.model, err)
			}
			got := tok.PreTokenizer.splitPatterns(nil)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("Split patterns %q, want %q", got, tt.want)
			}
			for _, p := range got {
				if _, ok := Lookup(p); !ok {
					t.Errorf("no scanner for %q", p)
				}
			}
		})
	}
}

// preTokenizer is the part of tokenizer.json's pre_tokenizer the test reads.
type preTokenizer struct {
	Type    string `json:"type"`
	Pattern struct {
		Regex *string `json:"Regex"`
	} `json:"pattern"`
	PreTokenizers []preTokenizer `json:"pretokenizers"`
}

func (p preTokenizer) splitPatterns(dst []string) []string {
	if p.Type == "Split" && p.Pattern.Regex != nil {
		dst = append(dst, *p.Pattern.Regex)
	}
	for _, sub := range p.PreTokenizers {
		dst = sub.splitPatterns(dst)
	}
	return dst
}

// TestScanResumes checks the bounded scans against whole ones: resuming
// where each step stopped, at every step size, gives the same matches.
func TestScanResumes(t *testing.T) {
	inputs := append(corpus(7, 300), benchText(5000, true), benchText(5000, false))
	for pattern := range scanners {
		scan, _ := LookupScan(pattern)
		whole, _ := Lookup(pattern)
		for _, s := range inputs {
			want := whole(s, nil)
			for _, limit := range []int{1, 2, 3, 7, 64} {
				var got []int
				for from := 0; from < len(s); {
					n := len(got)
					got, from = scan(s, from, limit, got)
					if len(got)-n > 2*limit {
						t.Fatalf("pattern %q: %d matches in a step of %d", pattern, (len(got)-n)/2, limit)
					}
					if len(got) == n {
						break
					}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("pattern %q, input %q, steps of %d:\n got %v\nwant %v", pattern, s, limit, got, want)
				}
			}
		}
	}
}
