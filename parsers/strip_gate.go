package parsers

import (
	"github.com/vrender/vrender/internal/statecodec"
	"strings"
	"unicode/utf8"
)

// stripGate streams content whose answer is either the raw text (no calls)
// or strip(text outside the calls) (calls): it emits what both agree on and
// holds the rest until the verdict. Text before the calls agrees when the
// output starts with non-space, except trailing space; after leading space
// it is held. Text after the calls only exists in the stripped answer.
type stripGate struct {
	started bool
	// lead is set when the output starts with space: text is held in Held.
	lead bool
	held []byte
	// trail is trailing space held back; Pend an incomplete UTF-8 tail.
	trail []byte
	pend  []byte
	// any is set once non-space content went out.
	any       bool
	calledOut bool
}

// text takes content text, before or (once called) after the calls.
func (g *stripGate) text(out *strings.Builder, s string) {
	if len(g.pend) > 0 {
		s = string(g.pend) + s
		g.pend = g.pend[:0]
	}
	if n := incompleteTail(s); n > 0 {
		g.pend = append(g.pend, s[len(s)-n:]...)
		s = s[:len(s)-n]
	}
	if s == "" {
		return
	}
	if g.calledOut {
		g.stream(out, s)
		return
	}
	if !g.started {
		g.started = true
		r, _ := utf8.DecodeRuneInString(s)
		g.lead = pyIsSpace(r)
	}
	if g.lead {
		g.held = append(g.held, s...)
		return
	}
	g.stream(out, s)
}

// stream emits s as stripped content, holding trailing space.
func (g *stripGate) stream(out *strings.Builder, s string) {
	if !g.any {
		s = strings.TrimLeftFunc(s, pyIsSpace)
	}
	cut := len(strings.TrimRightFunc(s, pyIsSpace))
	if cut == 0 {
		g.trail = append(g.trail, s...)
		return
	}
	out.Write(g.trail)
	out.WriteString(s[:cut])
	g.trail = append(g.trail[:0], s[cut:]...)
	g.any = true
}

// called settles on the stripped answer.
func (g *stripGate) called(out *strings.Builder) {
	g.calledOut = true
	if len(g.held) > 0 {
		h := string(g.held)
		g.held = nil
		g.stream(out, h)
	}
}

// raw settles on the raw answer: everything held goes out.
func (g *stripGate) raw(out *strings.Builder) {
	out.Write(g.held)
	out.Write(g.trail)
	out.Write(g.pend)
	g.held, g.trail, g.pend = nil, nil, nil
}

// finish ends a called answer: trailing space is stripped unless an
// incomplete sequence follows it.
func (g *stripGate) finish(out *strings.Builder) {
	if len(g.pend) > 0 {
		out.Write(g.trail)
		out.Write(g.pend)
	}
	g.trail, g.pend = nil, nil
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

// codec saves and restores the state of a stripGate.
func (g *stripGate) codec(c *statecodec.Codec) {
	c.Bool(&g.started)
	c.Bool(&g.lead)
	c.ByteSlice(&g.held)
	c.ByteSlice(&g.trail)
	c.ByteSlice(&g.pend)
	c.Bool(&g.any)
	c.Bool(&g.calledOut)
}
