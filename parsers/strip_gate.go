package parsers

import (
	"strings"
	"unicode/utf8"
)

// stripGate streams content whose answer is either the raw text (no calls)
// or strip(text outside the calls) (calls): it emits what both agree on and
// holds the rest until the verdict. Text before the calls agrees when the
// output starts with non-space, except trailing space; after leading space
// it is held. Text after the calls only exists in the stripped answer.
type stripGate struct {
	Started bool
	// Lead is set when the output starts with space: text is held in Held.
	Lead bool
	Held []byte
	// Trail is trailing space held back; Pend an incomplete UTF-8 tail.
	Trail []byte
	Pend  []byte
	// Any is set once non-space content went out.
	Any    bool
	Called bool
}

// text takes content text, before or (once called) after the calls.
func (g *stripGate) text(out *strings.Builder, s string) {
	if len(g.Pend) > 0 {
		s = string(g.Pend) + s
		g.Pend = g.Pend[:0]
	}
	if n := incompleteTail(s); n > 0 {
		g.Pend = append(g.Pend, s[len(s)-n:]...)
		s = s[:len(s)-n]
	}
	if s == "" {
		return
	}
	if g.Called {
		g.stream(out, s)
		return
	}
	if !g.Started {
		g.Started = true
		r, _ := utf8.DecodeRuneInString(s)
		g.Lead = pyIsSpace(r)
	}
	if g.Lead {
		g.Held = append(g.Held, s...)
		return
	}
	g.stream(out, s)
}

// stream emits s as stripped content, holding trailing space.
func (g *stripGate) stream(out *strings.Builder, s string) {
	if !g.Any {
		s = strings.TrimLeftFunc(s, pyIsSpace)
	}
	cut := len(strings.TrimRightFunc(s, pyIsSpace))
	if cut == 0 {
		g.Trail = append(g.Trail, s...)
		return
	}
	out.Write(g.Trail)
	out.WriteString(s[:cut])
	g.Trail = append(g.Trail[:0], s[cut:]...)
	g.Any = true
}

// called settles on the stripped answer.
func (g *stripGate) called(out *strings.Builder) {
	g.Called = true
	if len(g.Held) > 0 {
		h := string(g.Held)
		g.Held = nil
		g.stream(out, h)
	}
}

// raw settles on the raw answer: everything held goes out.
func (g *stripGate) raw(out *strings.Builder) {
	out.Write(g.Held)
	out.Write(g.Trail)
	out.Write(g.Pend)
	g.Held, g.Trail, g.Pend = nil, nil, nil
}

// finish ends a called answer: trailing space is stripped unless an
// incomplete sequence follows it.
func (g *stripGate) finish(out *strings.Builder) {
	if len(g.Pend) > 0 {
		out.Write(g.Trail)
		out.Write(g.Pend)
	}
	g.Trail, g.Pend = nil, nil
}

// incompleteTail is the length of a UTF-8 sequence cut off at s's end.
func incompleteTail(s string) int {
	for j := len(s) - 1; j >= 0 && j >= len(s)-utf8.UTFMax; j-- {
		if utf8.RuneStart(s[j]) {
			if !utf8.FullRuneInString(s[j:]) {
				return len(s) - j
			}
			return 0
		}
	}
	return 0
}
