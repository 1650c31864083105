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
	kind  HotKind // HotNone when cold
	index int
	stop  *byteSet
	// plain (arguments only) is stop plus jsonStringSpecial: text without
	// any of them is a plain fragment at a glance. plainOut says such a
	// fragment goes out as it is (parallel_tool_calls does not drop the
	// call).
	plain    *byteSet
	plainOut bool
	// fast is PushHot's one test: text without a byte of it is answered
	// whole as kind. It is stop for reasoning that goes out, plain for
	// arguments while plainOut and no escape is held, else nil.
	fast *byteSet
	// escape is a backslash that ended the last arguments push: the
	// machines have not seen it (settle hands it over), and the next
	// push starts with its escaped byte.
	escape bool
}

// HotKind is what a push answered by the hot path was (see PushHot).
type HotKind uint8

const (
	// HotNone: the push was not taken; the general path must run.
	HotNone HotKind = iota
	// HotReasoning: the push is reasoning.
	HotReasoning
	// HotArgs: the push is an arguments fragment.
	HotArgs
)

// PushHot is PushReuse for the steady state of a stream, inside
// reasoning or a tool call's string argument, without building a Delta:
// a caller that renders the answer itself spares a one-token push the
// general path's layers. When kind is HotNone nothing was consumed and
// text must go to Push or PushReuse; otherwise the push's whole answer
// is out, as reasoning or as the arguments fragment of call index ("" when
// nothing is emitted: an empty push, include_reasoning=false, a call
// parallel_tool_calls=false drops, or an escape held for the next push).
// A per-token loop asks PushPlain first, which answers most pushes
// inline; PushHot answers those too, only not inline.
func (p *Parser) PushHot(text string) (kind HotKind, index int, out string) {
	if p.hot.kind == HotNone {
		return HotNone, 0, ""
	}
	kind, out = p.hotTake(text)
	if kind == HotNone {
		return HotNone, 0, ""
	}
	switch {
	case kind == HotReasoning && !p.IncludeReasoning:
		out = ""
	case kind == HotArgs && !p.Parallel && p.hot.index != 0:
		out = ""
	case kind == HotArgs && out != "":
		p.CallsOut = true
	}
	return kind, p.hot.index, out
}

// PushPlain is PushHot's commonest case, small enough to inline into a
// caller's per-token loop: reasoning that goes out, or a plain fragment
// of an argument whose call is emitted (so already counted in CallsOut).
// When ok, text is the push's whole answer as kind (of call index); when
// not, nothing was consumed and PushHot must see text.
func (p *Parser) PushPlain(text string) (kind HotKind, index int, ok bool) {
	if set := p.hot.fast; set != nil && len(text) > 0 && !set.any(text) {
		return p.hot.kind, p.hot.index, true
	}
	return HotNone, 0, false
}

// setEscape records whether a backslash is held, and so whether
// PushHot's one test applies.
func (h *hotPath) setEscape(escape bool) {
	h.escape = escape
	h.fast = nil
	if h.plainOut && !escape {
		h.fast = h.plain
	}
}

// hotPush answers a push from the hot path (PushPlain, then PushHot) as
// a Delta; ok is false when the machines must see it.
func (p *Parser) hotPush(d *Delta, text string, reuse bool) bool {
	kind, index, plain := p.PushPlain(text)
	out := text
	if !plain {
		if kind, index, out = p.PushHot(text); kind == HotNone {
			return false
		}
	}
	switch {
	case out == "":
	case kind == HotReasoning:
		d.Reasoning = out
	default:
		p.argsDelta(d, index, out, reuse)
	}
	return true
}

// hotTake is the hot path's answer to text: what it is and the text it
// yields, unfiltered.
func (p *Parser) hotTake(text string) (HotKind, string) {
	if text == "" {
		// The machines take an empty push as nothing.
		if p.hot.kind == HotArgs {
			return HotArgs, ""
		}
		return HotReasoning, ""
	}
	if p.hot.kind == HotReasoning {
		if p.hot.stop.any(text) {
			return HotNone, ""
		}
		return HotReasoning, text
	}
	if !p.hot.escape && !p.hot.plain.any(text) {
		return HotArgs, text // most tokens of a long argument
	}
	if p.hot.stop.any(text) {
		return HotNone, ""
	}
	start := 0
	if p.hot.escape {
		if !pyjson.VerbatimEscape(text[0]) {
			return HotNone, ""
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
		return HotNone, ""
	}
	frag := text[:n]
	if p.hot.escape {
		frag = p.text.escaped(frag)
	}
	p.hot.setEscape(escape)
	return HotArgs, frag
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
		p.push(&d, p.coolText(""), false)
	}
	p.hot = hotPath{}
}

// argsDelta is the delta of an arguments fragment of call idx.
func (p *Parser) argsDelta(d *Delta, idx int, text string, reuse bool) {
	frag := ToolCallDelta{Index: idx, Arguments: text}
	if reuse {
		d.ToolCalls = append(p.reused[:0], frag)
		p.reused = d.ToolCalls[:0]
	} else {
		d.ToolCalls = p.arena.commit(append(p.arena.free(), frag))
	}
	p.filter(d)
}

// warmReasoning makes the hot path reasoning when the machines say a
// push just handled leaves them where plain pushes are pure reasoning.
func (p *Parser) warmReasoning() {
	r, ok := p.Reasoning.(hotReasoner)
	if !ok {
		return
	}
	stop, ok := r.hotReasoning()
	if !ok || stop == nil {
		return
	}
	if p.Parse {
		if _, ok := p.Tools.(emptyIdempotent); !ok {
			return
		}
	}
	p.hot = hotPath{kind: HotReasoning, stop: stop}
	if p.IncludeReasoning {
		p.hot.fast = stop
	}
}

// passThrough implements passThrougher: in content, with nothing held
// and no byte that starts a marker, Push returns ("", text).
func (e *EngineReasoning) passThrough(text string) bool {
	return e.Disabled || e.InContent && e.Scan.Held == "" && !e.spec.contentStop.any(text)
}

// takeArgs implements argStreamer: inside a named call's arguments
// string, with nothing held and no byte of "</tool_call>", the push is a
// verbatim fragment.
func (h *Hermes) takeArgs(text string) (index int, hot, ok bool) {
	c := &h.Call
	if h.Phase != hermesBody || h.Scan.Held != "" || c.Failed || !c.Named ||
		hermesCloseStop.any(text) || c.Obj.CurKey != c.argsKey() || !c.Obj.InPlainValue(text) {
		return 0, false, false
	}
	h.keep(text)
	h.dropRaw()
	return c.Index, h.RawDropped, true
}

var hermesCloseStop = newByteSet(hermesCloseMarkers)

func (h *Hermes) argsStop() *byteSet { return hermesCloseStop }

// emptyIdempotent implements emptyIdempotent: an empty push scans
// nothing, and dropRaw is idempotent.
func (h *Hermes) emptyIdempotent() {}

// hotReasoning implements hotReasoner: in reasoning, with nothing held
// and no trailing whitespace to strip, a push without a marker's first
// byte is returned whole as reasoning and changes nothing.
func (e *EngineReasoning) hotReasoning() (*byteSet, bool) {
	if e.Disabled || e.InContent || e.Scan.Held != "" || e.spec.stripTrailing {
		return nil, false
	}
	return e.spec.reasoningStop, true
}

// fastArgs is Push for a push both machines pass straight through as an
// arguments fragment; ok is false when the general path must run.
func (p *Parser) fastArgs(d *Delta, text string, reuse bool) bool {
	if !p.Parse || text == "" {
		return false
	}
	if p.Reasoning != nil {
		r, isPT := p.Reasoning.(passThrougher)
		if !isPT || !r.passThrough(text) {
			return false
		}
	}
	a, isAS := p.Tools.(argStreamer)
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
			if r, isR := p.Reasoning.(*EngineReasoning); isR && !r.Disabled {
				p.argsStop = p.argsStop.union(r.spec.contentStop)
			} else if p.Reasoning != nil && !isR {
				p.argsStop = &noHotArgs // only EngineReasoning's pass-through is known here
			}
		}
		if p.argsStop != &noHotArgs {
			if p.argsPlain == nil {
				p.argsPlain = p.argsStop.union(&jsonStringSpecial)
			}
			p.hot = hotPath{kind: HotArgs, index: idx, stop: p.argsStop, plain: p.argsPlain,
				plainOut: p.Parallel || idx == 0}
			p.hot.setEscape(false)
		}
	}
	p.argsDelta(d, idx, text, reuse)
	return true
}
