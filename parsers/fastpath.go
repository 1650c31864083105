package parsers

import "github.com/vrender/vrender/parsers/pyjson"

// The steady state of a one-token stream through a long tool-call argument
// is a push whose text is a piece of a JSON string: the reasoning machine
// passes it on as content, the tool machine hands it out as an arguments
// fragment unchanged. Machines that can tell so cheaply let the parser
// skip their general paths (marker scans, field routing, delta merging)
// for that push; the answer is the one the general path gives.

// passThrougher is a reasoning machine that can tell that a push would
// come out whole as content.
type passThrougher interface {
	passThrough(text string) bool
}

// argStreamer is a tool machine that can tell that a push is, whole and
// unchanged, an arguments fragment of the call at index, and takes it.
// hot reports that the machine keeps nothing of such a push, so further
// pushes that stay plain (see hotPath) need not reach it at all; stop
// holds the first bytes of the markers that could end the arguments.
type argStreamer interface {
	takeArgs(text string) (index int, hot bool, ok bool)
	argsStop() *byteSet
}

// hotReasoner is a reasoning machine that can tell that, from its current
// state, a push without a byte of stop comes out whole as reasoning and
// leaves the state as it is.
type hotReasoner interface {
	hotReasoning() (stop *byteSet, ok bool)
}

// emptyIdempotent is a tool machine for which pushing "" again changes
// nothing and returns nothing.
type emptyIdempotent interface {
	emptyIdempotent()
}

// A byteSet is a set of bytes, for testing a token's worth of text
// against marker first bytes in one pass.
type byteSet [256]bool

func newByteSet(marker ...[]string) *byteSet {
	var s byteSet
	for _, ms := range marker {
		for _, m := range ms {
			s[m[0]] = true
		}
	}
	return &s
}

func (s *byteSet) union(o *byteSet) *byteSet {
	u := *s
	for i, in := range o {
		u[i] = u[i] || in
	}
	return &u
}

// any reports whether text holds a byte of s.
func (s *byteSet) any(text string) bool {
	for i := 0; i < len(text); i++ {
		if s[text[i]] {
			return true
		}
	}
	return false
}

// noHotArgs marks a parser whose machines allow no hot arguments path.
var noHotArgs byteSet

// jsonStringSpecial holds the bytes that end a JSON string or start an
// escape or are not allowed in one: text inside a string without them
// re-serialises to itself.
var jsonStringSpecial = func() (s byteSet) {
	s['"'], s['\\'] = true, true
	for c := range 0x20 {
		s[c] = true
	}
	return s
}()

// hotPath remembers a steady state established by the machines' own
// checks, so that the next push, when it holds no byte of stop (and for
// arguments is plain JSON string text), is answered without asking them:
// they would answer the same and change nothing. Any other push, Finish,
// or a state restore clears it. It is a cache, never state.
type hotPath struct {
	kind  hotKind // hotNone when cold
	index int
	stop  *byteSet
	// plain (arguments only) is stop plus jsonStringSpecial: text without
	// any of them is a plain fragment at a glance. plainOut says such a
	// fragment goes out as it is (parallel_tool_calls does not drop the
	// call).
	plain    *byteSet
	plainOut bool
	// fast is Push's one test: text without a byte of it is answered
	// whole as kind. It is stop for reasoning that goes out, plain for
	// arguments while plainOut and no escape is held, else nil.
	fast *byteSet
	// escape is a backslash that ended the last arguments push: the
	// machines have not seen it (settle hands it over), and the next
	// push starts with its escaped byte.
	escape bool
}

// hotKind is what a push the hot path answers is.
type hotKind uint8

const (
	// hotNone: cold, or the push was not taken; the general path must run.
	hotNone hotKind = iota
	// hotReasoning: the push is reasoning.
	hotReasoning
	// hotArgs: the push is an arguments fragment of call hot.index.
	hotArgs
)

// hotOut appends the hot path's answer out, of kind, to d.
func (p *Parser) hotOut(d *Delta, kind hotKind, out string) {
	if kind == hotReasoning {
		p.addReasoning(d, out)
	} else {
		p.addArgs(d, p.hot.index, out)
	}
}

// addArgs appends an arguments fragment of call idx to d, unless
// parallel_tool_calls drops the call, as the general path's filter would.
func (p *Parser) addArgs(d *Delta, idx int, text string) {
	if text == "" || !p.parallel && idx != 0 {
		return
	}
	p.callsOut = true
	n := len(d.ToolCalls)
	if n == cap(d.ToolCalls) {
		frag := ToolCallDelta{Index: idx, Arguments: text}
		if n == 0 {
			d.ToolCalls = p.arena.commit(append(p.arena.free(), frag))
		} else {
			d.ToolCalls = append(d.ToolCalls, frag)
		}
		return
	}
	// A reused Delta's next slot usually holds the last push's fragment
	// already: write only what differs (a whole struct of strings costs
	// a typed copy per token).
	d.ToolCalls = d.ToolCalls[:n+1]
	c := &d.ToolCalls[n]
	c.Index, c.Arguments = idx, text
	if c.ID != "" || c.Type != "" || c.Name != "" {
		c.ID, c.Type, c.Name = "", "", ""
	}
}

// setEscape records whether a backslash is held, and so whether
// Push's one test applies.
func (h *hotPath) setEscape(escape bool) {
	h.escape = escape
	h.fast = nil
	if h.plainOut && !escape {
		h.fast = h.plain
	}
}

// hotTake is the hot path's answer to text: what it is and the text it
// yields, unfiltered.
func (p *Parser) hotTake(text string) (hotKind, string) {
	if text == "" {
		// The machines take an empty push as nothing.
		if p.hot.kind == hotArgs {
			return hotArgs, ""
		}
		return hotReasoning, ""
	}
	if p.hot.kind == hotReasoning {
		if p.hot.stop.any(text) {
			return hotNone, ""
		}
		return hotReasoning, text
	}
	if !p.hot.escape && !p.hot.plain.any(text) {
		return hotArgs, text // most tokens of a long argument
	}
	if p.hot.stop.any(text) {
		return hotNone, ""
	}
	start := 0
	if p.hot.escape {
		if !pyjson.VerbatimEscape(text[0]) {
			return hotNone, ""
		}
		start = 1
	}
	n := start + pyjson.PlainLen(text[start:])
	escape := false
	if n == len(text)-1 && text[n] == '\\' {
		// An escape split across tokens (")\\" then "n"), common in
		// code arguments: keep its backslash for the next push.
		escape = true
	} else if n != len(text) {
		return hotNone, ""
	}
	frag := text[:n]
	if p.hot.escape {
		frag = p.text.escaped(frag)
	}
	p.hot.setEscape(escape)
	return hotArgs, frag
}

// coolText ends the hot path before text goes to the machines, handing
// them a held backslash first.
func (p *Parser) coolText(text string) string {
	if p.hot.escape {
		text = "\\" + text
	}
	p.hot = hotPath{}
	return text
}

// settle brings the machines up to date with everything pushed, for a
// caller about to read or save their state.
func (p *Parser) settle() {
	if p.hot.escape {
		// A lone escape start yields nothing: the string machine waits
		// for its next byte.
		var d Delta
		p.push(&d, p.coolText(""))
	}
	p.hot = hotPath{}
}

// warmReasoning makes the hot path reasoning when the machines say a
// push just handled leaves them where plain pushes are pure reasoning.
func (p *Parser) warmReasoning() {
	r, ok := p.reasoning.(hotReasoner)
	if !ok {
		return
	}
	stop, ok := r.hotReasoning()
	if !ok || stop == nil {
		return
	}
	if p.parse {
		if _, ok := p.tools.(emptyIdempotent); !ok {
			return
		}
	}
	p.hot = hotPath{kind: hotReasoning, stop: stop}
	if p.includeReasoning {
		p.hot.fast = stop
	}
}

// passThrough implements passThrougher: in content, with nothing held
// and no byte that starts a marker, Push returns ("", text).
func (e *engineReasoning) passThrough(text string) bool {
	return e.disabled || e.inContent && e.scan.held == "" && !e.spec.contentStop.any(text)
}

// takeArgs implements argStreamer: inside a named call's arguments
// string, with nothing held and no byte of "</tool_call>", the push is a
// verbatim fragment.
func (h *hermes) takeArgs(text string) (index int, hot, ok bool) {
	c := &h.call
	if h.phase != hermesBody || h.scan.held != "" || c.failed || !c.named ||
		hermesCloseStop.any(text) || c.obj.Key() != c.argsKey() || !c.obj.InPlainValue(text) {
		return 0, false, false
	}
	h.keep(text)
	h.dropRaw()
	return c.index, h.rawDropped, true
}

var hermesCloseStop = newByteSet(hermesCloseMarkers)

func (h *hermes) argsStop() *byteSet { return hermesCloseStop }

// emptyIdempotent implements emptyIdempotent: an empty push scans
// nothing, and dropRaw is idempotent.
func (h *hermes) emptyIdempotent() {}

// hotReasoning implements hotReasoner: in reasoning, with nothing held
// and no trailing whitespace to strip, a push without a marker's first
// byte is returned whole as reasoning and changes nothing.
func (e *engineReasoning) hotReasoning() (*byteSet, bool) {
	if e.disabled || e.inContent || e.scan.held != "" || e.spec.stripTrailing {
		return nil, false
	}
	return e.spec.reasoningStop, true
}

// fastArgs is Push for a push both machines pass straight through as an
// arguments fragment; ok is false when the general path must run.
func (p *Parser) fastArgs(d *Delta, text string) bool {
	if !p.parse || text == "" {
		return false
	}
	if p.reasoning != nil {
		r, isPT := p.reasoning.(passThrougher)
		if !isPT || !r.passThrough(text) {
			return false
		}
	}
	a, isAS := p.tools.(argStreamer)
	if !isAS {
		return false
	}
	idx, hot, ok := a.takeArgs(text)
	if !ok {
		return false
	}
	if hot {
		if p.argsStop == nil {
			p.argsStop = a.argsStop()
			if r, isR := p.reasoning.(*engineReasoning); isR && !r.disabled {
				p.argsStop = p.argsStop.union(r.spec.contentStop)
			} else if p.reasoning != nil && !isR {
				p.argsStop = &noHotArgs // only engineReasoning's pass-through is known here
			}
		}
		if p.argsStop != &noHotArgs {
			if p.argsPlain == nil {
				p.argsPlain = p.argsStop.union(&jsonStringSpecial)
			}
			p.hot = hotPath{kind: hotArgs, index: idx, stop: p.argsStop, plain: p.argsPlain,
				plainOut: p.parallel || idx == 0}
			p.hot.setEscape(false)
		}
	}
	p.addArgs(d, idx, text)
	return true
}
