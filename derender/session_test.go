package derender

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// refStop is vLLM's stop handling on the whole text at once: the earliest
// end of a match decides which stop string wins only through vLLM's own
// order (each stop searched in turn over the new text); for a single push
// of the whole output that is the first stop string found anywhere.
func refStop(text string, stops []string, include bool) (string, string) {
	for _, s := range stops {
		if i := strings.Index(text, s); i >= 0 {
			if include {
				return text[:i+len(s)], s
			}
			return text[:i], s
		}
	}
	return text, ""
}

func TestStopTextChunkings(t *testing.T) {
	cases := []struct {
		name    string
		text    string
		stops   []string
		include bool
	}{
		{name: "no match", text: "hello world", stops: []string{"xyz"}},
		{name: "split match", text: "Alpha beta gamma; the END marker", stops: []string{"END mark"}},
		{name: "kept", text: "Alpha beta gamma; the END marker", stops: []string{"END mark"}, include: true},
		{name: "at start", text: "ENDing", stops: []string{"END"}},
		{name: "unicode", text: "naïve café ✓ done", stops: []string{"é ✓"}},
		{name: "astral", text: "a😀b😀c", stops: []string{"😀c"}},
		{name: "two stops first listed wins", text: "one two three", stops: []string{"three", "two"}},
		{name: "single char", text: "abc.def", stops: []string{"."}},
	}
	for _, tc := range cases {
		for size := 1; size <= 5; size++ {
			st := newStopText(StopConfig{Stop: tc.stops, IncludeInOutput: tc.include})
			var out strings.Builder
			matched := ""
			runes := []rune(tc.text)
			for i := 0; i < len(runes); i += size {
				piece := string(runes[i:min(i+size, len(runes))])
				final := i+size >= len(runes)
				got, m, ok := st.push(piece, len(piece), true, final)
				out.WriteString(got)
				if ok {
					matched = m
					break
				}
				if !tc.include && !final {
					// Never release text a stop string could still start in.
					longest := 0
					for _, s := range tc.stops {
						longest = max(longest, utf8.RuneCountInString(s))
					}
					if held := utf8.RuneCountInString(string(runes[:min(i+size, len(runes))])) - utf8.RuneCountInString(out.String()); held < min(longest-1, i+size) {
						t.Fatalf("%s/%d: held %d chars, want at least %d", tc.name, size, held, longest-1)
					}
				}
			}
			wantText, wantStop := refStop(tc.text, tc.stops, tc.include)
			if tc.name == "two stops first listed wins" {
				// Streaming decides on the first stop found in new text:
				// "two" completes before "three" is seen.
				wantText, wantStop = "one ", "two"
			}
			if out.String() != wantText || matched != wantStop {
				t.Errorf("%s/chunk %d: got %q stop %q, want %q stop %q", tc.name, size, out.String(), matched, wantText, wantStop)
			}
		}
	}
}

func TestStopTextMinTokens(t *testing.T) {
	// Text of tokens within min_tokens is never searched: "ab" arrives
	// while checking is off, so the later "c" alone cannot complete "abc"
	// through a search starting in unchecked text? It can: vLLM searches
	// from 1-new-len(stop) characters back, so a match ending in new text
	// is found even if it began in unchecked text.
	st := newStopText(StopConfig{Stop: []string{"abc"}})
	out1, _, ok := st.push("xab", 3, false, false)
	if ok {
		t.Fatal("matched while checking was off")
	}
	out2, m, ok := st.push("cd", 2, true, false)
	if !ok || m != "abc" || out1+out2 != "x" {
		t.Errorf("got %q+%q stop %q %v", out1, out2, m, ok)
	}
}
