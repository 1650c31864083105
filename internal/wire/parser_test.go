package wire

import (
	"fmt"
	"strings"
	"testing"
)

// checkParserSequence parses docs in order with one Parser and each alone
// with Parse: the trees (and errors) must be the same, and the earlier
// trees must be unchanged by the later parses.
func checkParserSequence(t *testing.T, docs []string) {
	t.Helper()
	var ps Parser
	var got []*Node
	var want []*Node
	for _, doc := range docs {
		w, werr := Parse([]byte(doc))
		g, gerr := ps.Parse([]byte(doc))
		if fmt.Sprintf("%T %v", gerr, gerr) != fmt.Sprintf("%T %v", werr, werr) {
			t.Fatalf("%q: Parser error %v, Parse %v", doc, gerr, werr)
		}
		if werr != nil {
			continue
		}
		got, want = append(got, g), append(want, w)
	}
	for i := range got {
		if g, w := nodeDump(got[i]), nodeDump(want[i]); g != w {
			t.Fatalf("tree %d differs from Parse's after the whole sequence", i)
		}
	}
}

func TestParserMatchesParse(t *testing.T) {
	docs := []string{
		`{"city": "Paris", "unit": "celsius"}`, `[1, 2.5, "\u00e9", null, true]`, `{"a": [1, {"b": "x\ny"}], "a": 2}`,
		`{"bad": }`, ``, `"` + strings.Repeat(`\u00e9ab`, 3000) + `"`, strings.Repeat("[", 50) + strings.Repeat("]", 50),
		strings.Repeat("[", 2000), `{}`, `[]`, `"tail"`,
	}
	checkParserSequence(t, docs)
	many := make([]string, 0, 300)
	for i := range 300 {
		many = append(many, fmt.Sprintf(`{"k%d": [%d, "v%d", {"x": "\t%d"}]}`, i, i, i, i))
	}
	checkParserSequence(t, many)
}

// FuzzParserSequence: untrusted documents (tool-call arguments) parsed one
// after another into shared slabs give Parse's trees and errors.
func FuzzParserSequence(f *testing.F) {
	f.Add(`{"a": [1, "b"]}`, `{"x": "\u00e9"}`, `[1,`)
	f.Add(`"`+strings.Repeat("ab", 5000)+`"`, `null`, `{"k": {"k": {"k": []}}}`)
	f.Fuzz(func(t *testing.T, a, b, c string) {
		checkParserSequence(t, []string{a, b, c, a})
	})
}

// nodeDump spells out a tree, every field but the nil-ness of an empty
// object's slices (which depends on whether a slab was there to cut them
// from).
func nodeDump(n *Node) string {
	var b strings.Builder
	var walk func(n *Node)
	walk = func(n *Node) {
		fmt.Fprintf(&b, "(%d %v %q %q %d", n.Kind, n.B, n.S, n.Raw, n.Depth)
		for _, c := range n.Arr {
			walk(c)
		}
		for i, k := range n.Keys {
			fmt.Fprintf(&b, " %q:", k)
			walk(n.Vals[i])
		}
		b.WriteByte(')')
	}
	walk(n)
	return b.String()
}
