package split

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// testPatterns names every registered pattern.
var testPatterns = []struct{ name, pattern string }{
	{"qwen3", Qwen3Pattern},
	{"cl100k", Cl100kPattern},
	{"o200k", O200kPattern},
	{"deepseek_digits", DeepSeekDigitsPattern},
	{"deepseek_cjk", DeepSeekCJKPattern},
	{"deepseek_words", DeepSeekWordsPattern},
	{"bytelevel", ByteLevelPattern},
}

// compileOracle compiles pattern with regexp2's default options, which behave
// like Oniguruma for these patterns but for one case-folding gap: regexp2
// compares lower-cased runes, so (?i:'s) misses "'ſ" (U+017F, whose lower case
// is itself but whose case folding is s), which Oniguruma matches (see
// TestOnigReference). The oracle spells ſ out.
func compileOracle(t testing.TB, pattern string) *regexp2.Regexp {
	t.Helper()
	oracle := strings.ReplaceAll(pattern, "(?i:'s|", "(?i:'[sſ]|")
	re, err := regexp2.Compile(oracle, regexp2.None)
	if err != nil {
		t.Fatalf("regexp2 cannot compile %q: %v", pattern, err)
	}
	return re
}

// oracleMatches returns the start,end byte offsets of re's matches in s.
// regexp2 works on runes, one per rune of `for range s`.
func oracleMatches(re *regexp2.Regexp, s string) ([]int, error) {
	byteAt := make([]int, 0, len(s)+1)
	for i := range s {
		byteAt = append(byteAt, i)
	}
	byteAt = append(byteAt, len(s))
	var out []int
	m, err := re.FindStringMatch(s)
	for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
		out = append(out, byteAt[m.Index], byteAt[m.Index+m.Length])
	}
	if err != nil {
		return nil, fmt.Errorf("regexp2 on %q: %w", s, err)
	}
	return out, nil
}

// pieces renders offsets as the matched substrings, for failure messages.
func pieces(s string, offsets []int) string {
	var parts []string
	for i := 0; i+1 < len(offsets); i += 2 {
		if offsets[i] < 0 || offsets[i] > offsets[i+1] || offsets[i+1] > len(s) {
			parts = append(parts, fmt.Sprintf("<bad %d:%d>", offsets[i], offsets[i+1]))
			continue
		}
		parts = append(parts, fmt.Sprintf("%q", s[offsets[i]:offsets[i+1]]))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// checkAgainstOracle reports a difference between the scanner and regexp2 on s.
func checkAgainstOracle(t testing.TB, f Func, re *regexp2.Regexp, s string) bool {
	t.Helper()
	want, err := oracleMatches(re, s)
	if err != nil {
		t.Fatal(err)
	}
	got := f(s, nil)
	if slices.Equal(got, want) {
		return true
	}
	t.Errorf("input %q\n got %v %s\nwant %v %s", s, got, pieces(s, got), want, pieces(s, want))
	return false
}

// hasNewerUnicode reports whether s holds a rune that only the addendum
// classifies. regexp2 uses Go's older tables there, so such inputs are left
// to TestOnigReference.
func hasNewerUnicode(s string) bool {
	for _, r := range s {
		for _, gc := range generalCategories {
			if unicode.Is(gc.addendum, r) {
				return true
			}
		}
	}
	return false
}

// TestMatchesRegexp2 compares every scanner with regexp2 on a generated
// corpus covering every branch of every pattern.
func TestMatchesRegexp2(t *testing.T) {
	var inputs []string
	skipped := 0
	for _, s := range corpus(1, 20500) {
		if hasNewerUnicode(s) {
			skipped++
			continue
		}
		inputs = append(inputs, s)
	}
	if len(inputs) < 20000 {
		t.Fatalf("only %d inputs without runes newer than Go's tables", len(inputs))
	}
	t.Logf("%d inputs; %d with runes newer than Go's unicode tables left to TestOnigReference", len(inputs), skipped)
	for _, tp := range testPatterns {
		t.Run(tp.name, func(t *testing.T) {
			f, ok := Lookup(tp.pattern)
			if !ok {
				t.Fatalf("no scanner for %q", tp.pattern)
			}
			re := compileOracle(t, tp.pattern)
			failures := 0
			for _, s := range inputs {
				if !checkAgainstOracle(t, f, re, s) {
					if failures++; failures == 10 {
						t.Fatal("too many differences")
					}
				}
			}
		})
	}
}

// fuzzSplit runs a differential fuzz target for one pattern.
func fuzzSplit(f *testing.F, pattern string) {
	for _, s := range corpus(2, 200) {
		f.Add(s)
	}
	scan, ok := Lookup(pattern)
	if !ok {
		f.Fatalf("no scanner for %q", pattern)
	}
	re := compileOracle(f, pattern)
	f.Fuzz(func(t *testing.T, s string) {
		// Inputs are valid UTF-8 by contract; anything else must still not
		// panic and must yield ordered, in-bounds matches.
		got := scan(s, nil)
		checkWellFormed(t, s, got)
		if !utf8.ValidString(s) || hasNewerUnicode(s) {
			return
		}
		checkAgainstOracle(t, scan, re, s)
	})
}

// checkWellFormed verifies that matches are non-empty, ordered and in bounds.
func checkWellFormed(t testing.TB, s string, offsets []int) {
	t.Helper()
	if len(offsets)%2 != 0 {
		t.Fatalf("odd number of offsets %v", offsets)
	}
	prev := 0
	for i := 0; i < len(offsets); i += 2 {
		start, end := offsets[i], offsets[i+1]
		if start < prev || end <= start || end > len(s) {
			t.Fatalf("input %q: bad match %d:%d after %d in %v", s, start, end, prev, offsets)
		}
		prev = end
	}
}

func FuzzSplitQwen3(f *testing.F)          { fuzzSplit(f, Qwen3Pattern) }
func FuzzSplitCl100k(f *testing.F)         { fuzzSplit(f, Cl100kPattern) }
func FuzzSplitO200k(f *testing.F)          { fuzzSplit(f, O200kPattern) }
func FuzzSplitDeepSeekDigits(f *testing.F) { fuzzSplit(f, DeepSeekDigitsPattern) }
func FuzzSplitDeepSeekCJK(f *testing.F)    { fuzzSplit(f, DeepSeekCJKPattern) }
func FuzzSplitDeepSeekWords(f *testing.F)  { fuzzSplit(f, DeepSeekWordsPattern) }
func FuzzSplitByteLevel(f *testing.F)      { fuzzSplit(f, ByteLevelPattern) }
