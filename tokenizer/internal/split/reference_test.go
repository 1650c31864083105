package split

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"slices"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

var (
	updateReference = flag.Bool("update-reference", false,
		"regenerate "+referenceFile+" with the reference binding (needs node and .cache/ref)")
	onigCorpus = flag.Bool("onig-corpus", false,
		"compare the whole differential corpus with the reference binding (needs node and .cache/ref)")
)

const referenceFile = "testdata/onig_reference.json"

// onigMatches is the format of referenceFile and of onig_reference.js's output:
// Matches[p][i] are the flat start,end byte offsets of Patterns[p] in Inputs[i].
type onigMatches struct {
	Patterns []string  `json:"patterns"`
	Inputs   []string  `json:"inputs"`
	Matches  [][][]int `json:"matches"`
}

// referenceInputs are hand-picked edge cases, then a slice of the generated corpus.
func referenceInputs() []string {
	picked := []string{
		"", "Hello world", "I'm", "I'M", "you're", "YOU'RE", "we'Ve", "it'ſ", "it'\u212a", "'ſt", "'ll'LL'lL", "x'y",
		"'ß", "'ﬆ", "JOHN'S", "don't", "DON'T", "o'clock", "'",
		"  leading", "trailing  ", "a  b", "a\t\tb", "a \n b", "a\n\n\nb", "a\r\n\r\nb", "  \n  \n  x", "\u3000\u3000x",
		"\u00a0a", "\u0085\u0085x", " \u2028x", "\u180e\u200bx", "\x1c\x1dx", " \v\fx",
		"123456789", "١٢٣٤٥", "x²³", "½⅓", "Ⅻ12", "𝟘𝟙𝟚𝟛",
		"HTTPServer", "ABCdef'S", "iPhone's", "ǅungla", "ǅ", "ʰʰA", "\u0301A", "\u0301a", "A\u0301\u0301b", "a\u0301B", "\u0903X",
		"中文English日本語カタカナ", "\u4dff\u4e00\u9fa5\u9fa6", "\u303f\u3040\u309f\u30a0\u30ff\u3100", "ｶﾀｶﾅ",
		"foo://bar/baz", "a/b//\n/c", "!!!\n\n", " ??\r\n", "'hello 'héllo", "\"quoted\"", "@user", "#tag", "$100", "1,000.50",
		"a$b+c^d|e~f<g=h>i`j", "«»¿¡—…€©™°→∑",
		"😀😀 👍🏽 👨\u200d👩\u200d👧", "🇺🇸🇬🇧", "1️⃣",
		"مرحبا بالعالم", "नमस्ते दुनिया", "ภาษาไทย", "𝐀𝐁𝐜𝐝",
		"\x00\x01abc\x7f", "\u200dx", "x\u200d", "\ue000\U000f0000\ufdd0",
	}
	picked = append(picked, newerUnicodeInputs()...)
	return append(picked, corpus(3, 300)...)
}

// newerUnicodeInputs puts the first and last rune of each addendum class in
// a few contexts, to pin the Unicode version the reference uses.
func newerUnicodeInputs() []string {
	var out []string
	for _, gc := range generalCategories {
		var runes []rune
		forEachRune(gc.addendum, func(r rune) { runes = append(runes, r) })
		if len(runes) == 0 {
			continue
		}
		for _, r := range []rune{runes[0], runes[len(runes)-1]} {
			c := string(r)
			out = append(out, "a"+c+"b", " "+c+c+"1", "A"+c+"'s", "!"+c+"\n", "1"+c+"23")
		}
	}
	return out
}

// runOnigReference runs onig_reference.js over patterns and inputs.
func runOnigReference(t *testing.T, patterns, inputs []string) onigMatches {
	t.Helper()
	node := testenv.Node(t)
	modules := testenv.RefNodeModules(t)
	in, err := json.Marshal(onigMatches{Patterns: patterns, Inputs: inputs})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), node, "testdata/onig_reference.js", modules)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("onig_reference.js: %v\n%s", err, stderr.String())
	}
	var ref onigMatches
	if err := json.Unmarshal(out, &ref); err != nil {
		t.Fatalf("onig_reference.js output: %v", err)
	}
	if len(ref.Matches) != len(patterns) {
		t.Fatalf("onig_reference.js returned %d pattern results, want %d", len(ref.Matches), len(patterns))
	}
	return ref
}

func allPatterns() []string {
	var ps []string
	for _, tp := range testPatterns {
		ps = append(ps, tp.pattern)
	}
	return ps
}

// compareWithReference checks every scanner against recorded Oniguruma matches.
func compareWithReference(t *testing.T, ref onigMatches) {
	t.Helper()
	for p, pattern := range ref.Patterns {
		f, ok := Lookup(pattern)
		if !ok {
			t.Errorf("reference pattern %q has no scanner", pattern)
			continue
		}
		failures := 0
		for i, s := range ref.Inputs {
			want := ref.Matches[p][i]
			got := f(s, nil)
			if !slices.Equal(got, want) {
				t.Errorf("pattern %q\ninput %q\n got %v %s\nwant %v %s", pattern, s, got, pieces(s, got), want, pieces(s, want))
				if failures++; failures == 10 {
					t.Fatal("too many differences")
				}
			}
		}
	}
}

// TestOnigReference compares every scanner with matches recorded from
// Oniguruma itself, through the Hugging Face tokenizers Node binding
// (regenerate with -update-reference).
func TestOnigReference(t *testing.T) {
	if *updateReference {
		ref := runOnigReference(t, allPatterns(), referenceInputs())
		data, err := json.Marshal(ref)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(referenceFile, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(referenceFile)
	if err != nil {
		t.Fatal(err)
	}
	var ref onigMatches
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatalf("%s: %v", referenceFile, err)
	}
	for _, p := range allPatterns() {
		if !slices.Contains(ref.Patterns, p) {
			t.Errorf("%s lacks pattern %q; regenerate with -update-reference", referenceFile, p)
		}
	}
	compareWithReference(t, ref)
}

// TestOnigReferenceCorpus runs the whole differential corpus through the
// reference binding; it takes a while, so it only runs with -onig-corpus.
func TestOnigReferenceCorpus(t *testing.T) {
	if !*onigCorpus {
		t.Skip("pass -onig-corpus to compare the whole corpus with the reference binding")
	}
	compareWithReference(t, runOnigReference(t, allPatterns(), corpus(1, 20000)))
}
