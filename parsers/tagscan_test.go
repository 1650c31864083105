package parsers

import (
	"reflect"
	"strings"
	"testing"
)

// TestLongOpenTagIsLinear feeds outputs with a 200 KB tag that stays open
// (an unclosed parameter name, or a long whitespace run inside a tag) one
// byte at a time. Each byte must be examined a bounded number of times —
// matching the tag again from its '<' on every push would examine ~2·10¹⁰
// — and the accumulated answer must equal the one-push answer.
func TestLongOpenTagIsLinear(t *testing.T) {
	const n = 200 << 10
	letters, spaces, words := strings.Repeat("a", n), strings.Repeat(" \t\n", n/3), strings.Repeat("a b ", n/4)
	mm := func(params string) string {
		return `<minimax:tool_call><invoke name="echo">` + params + `</invoke></minimax:tool_call>`
	}
	qc := func(params string) string {
		return "<tool_call>\n<function=get_weather>\n" + params + "</function>\n</tool_call>"
	}
	cases := []struct {
		name string
		cfg  Config
		req  string
		text string
	}{
		{"minimax_m2/unclosed quoted name", mmOnly, mmTools, mm(`<parameter name="` + letters + `">v</parameter>`)},
		{"minimax_m2/quoted name with spaces", mmOnly, mmTools, mm(`<parameter name="` + words + `"x>v</parameter>`)},
		{"minimax_m2/unclosed bare name", mmOnly, mmTools, mm(`<parameter name=` + letters + ` >v</parameter>`)},
		{"minimax_m2/quoted name never closed", mmOnly, mmTools, mm(`<parameter name="` + letters)},
		{"minimax_m2/spaces before name", mmOnly, mmTools, mm(`<parameter` + spaces + `name="message">v</parameter>`)},
		{"minimax_m2/spaces after the quote", mmOnly, mmTools, mm(`<parameter name="message"` + spaces + `>v</parameter>`)},
		{"minimax_m2/spaces in a closing tag", mmOnly, mmTools, mm(`<parameter name="message">v<` + spaces + `/parameter>`)},
		{"minimax_m2/spaces in the next opening tag", mmOnly, mmTools, mm(`<parameter name="message">v<parameter` + spaces + `name="days">2</parameter>`)},
		{"qwen3_coder/unclosed name", qcOnly, qcTools, qc("<parameter=" + letters + ">\nv\n</parameter>\n")},
		{"qwen3_coder/name never closed", qcOnly, qcTools, qc("<parameter=" + letters)},
		{"qwen3_coder/spaces before =", qcOnly, qcTools, qc("<parameter" + spaces + "=city>\nv\n</parameter>\n")},
		{"qwen3_coder/spaces in a closing tag", qcOnly, qcTools, qc("<parameter=city>\nv<" + spaces + "/parameter>\n")},
		{"qwen3_coder/spaces in the next opening tag", qcOnly, qcTools, qc("<parameter=city>v<parameter" + spaces + "=days>2</parameter>\n")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := mustRequest(t, tc.req)
			p, err := New(tc.cfg, testVocab, req, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The body scanner restarts (its counter with it) at each call.
			counter := func() int {
				switch m := p.tools.(type) {
				case *minimaxM2:
					return m.params.scanned
				case *qwen3Coder:
					return m.params.scanned
				}
				t.Fatalf("unexpected machine %T", p.tools)
				return 0
			}
			var acc Accumulator
			scanned := 0
			for i := range len(tc.text) {
				before := counter()
				acc.Add(pushDelta(p, tc.text[i:i+1]))
				if d := counter() - before; d > 0 {
					scanned += d
				}
			}
			acc.Add(finishDelta(p))
			if limit := 6 * len(tc.text); scanned > limit {
				t.Fatalf("examined %d bytes for a %d-byte output (limit %d): the open tag is re-scanned", scanned, len(tc.text), limit)
			}
			batch, _ := runSplits(t, tc.cfg, req, tc.text, nil)
			if stream := acc.Result(p, "stop"); !reflect.DeepEqual(normalise(stream), normalise(batch)) {
				t.Fatalf("stream %.300s\n batch %.300s", dump(stream), dump(batch))
			}
		})
	}
}

// TestTagScanResumes checks the resumable matcher against whole-input
// matching for every way of cutting a few tags in two.
func TestTagScanResumes(t *testing.T) {
	cases := []struct {
		pat  []tagElem
		text string
		want tagMatch
		end  int
	}{
		{paramClosePat, "</parameter>", tagYes, 12},
		{paramClosePat, "< \t/ parameter\u3000>x", tagYes, 18},
		{paramClosePat, "</param", tagMore, 0},
		{paramClosePat, "</parax", tagNo, 0},
		{paramClosePat, "<parameter name=", tagNo, 0},
		{mmAheadPat, "<parameter name=", tagYes, 16},
		{mmAheadPat, "<parametername=", tagNo, 0},
		{mmAheadPat, "<parameter   ", tagMore, 0},
		{mmAheadPat, "<parameter\u00a0name =x", tagYes, 18},
		{xmlAheadPat, "<parameter=", tagYes, 11},
		{xmlHeadPat, "<parameter= ", tagMore, 0},
		{xmlHeadPat, "<parameter= x", tagYes, 12},
	}
	for _, tc := range cases {
		whole := tagScan{}
		scanned := 0
		m, end := whole.match([]byte(tc.text), 0, tc.pat, &scanned)
		if m != tc.want || m == tagYes && end != tc.end {
			t.Fatalf("%q: got %d at %d, want %d at %d", tc.text, m, end, tc.want, tc.end)
		}
		for cut := 1; cut < len(tc.text); cut++ {
			var ts tagScan
			if m, _ := ts.match([]byte(tc.text[:cut]), 0, tc.pat, &scanned); m == tc.want && m != tagMore {
				continue // decided early, as whole-input matching would be
			}
			// Resume on the longer buffer, as feed does, with the tag
			// anchored further along after compaction.
			s := []byte("xyz" + tc.text)
			m, end := ts.match(s, 3, tc.pat, &scanned)
			if m != tc.want || m == tagYes && end != tc.end+3 {
				t.Fatalf("%q cut at %d: got %d at %d, want %d at %d", tc.text, cut, m, end, tc.want, tc.end+3)
			}
		}
	}
}
