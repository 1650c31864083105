package parsers

import (
	"strings"

	"github.com/vrender/vrender/internal/statecodec"
)

// MiniMax-M2 XML tool calls, as vLLM's MinimaxM2ToolParser (the
// declarative ParserEngine with the minimax_m2 grammar) runs on
// reasoning-stripped content:
//
//	<minimax:tool_call><invoke name="NAME"><parameter name="K">V</parameter></invoke></minimax:tool_call>
//
// Each <invoke name=…> (double-, single- or un-quoted) opens a call, also
// without the wrapper; the name runs to the first ">" terminal; the
// wrapper terminals and "</think>" are dropped from content; text between
// calls is dropped. A call counts when its stripped name is non-empty and,
// if the request has tools, one of them (validate_tool_names). Arguments
// are the <parameter name=…>V</parameter> pairs (V verbatim; a value ends
// at its closing tag or before the next opening tag, and one still open at
// the end is dropped), coerced by the tool's JSON schema. Content follows
// the engine's rules, engineGate (engine_tools.go).
//
// Parameters go out as each completes (a value is only certain at its
// closing tag). Known deviations, as for qwen3_coder: a repeated parameter
// keeps its first value, and a call with an empty name never borrows a
// "name" from a JSON body.

// The minimax_m2 grammar's terminals; all are lexed in every state.
const (
	mmThinkStart   = "<think>"
	mmThinkEnd     = "</think>"
	mmToolStart    = "<minimax:tool_call>"
	mmToolEnd      = "</minimax:tool_call>"
	mmInvokeDQ     = `<invoke name="`
	mmInvokeSQ     = `<invoke name='`
	mmInvokeBare   = `<invoke name=`
	mmInvokeEnd    = "</invoke>"
	mmNameEndDQ    = `">`
	mmNameEndSQ    = `'>`
	mmNameEndBare  = ">"
	mmParamStart   = "<parameter name="
	mmParamEnd     = "</parameter>"
	mmParamOpenLit = "parameter"
)

var mmMarkers = []string{mmThinkStart, mmThinkEnd, mmToolStart, mmToolEnd, mmInvokeDQ, mmInvokeSQ, mmInvokeBare,
	mmInvokeEnd, mmNameEndDQ, mmNameEndSQ, mmNameEndBare, mmParamStart, mmParamEnd}

// mmState is the grammar's parser state.
type mmState uint8

const (
	mmContent mmState = iota
	mmPreamble
	mmName
	mmArgs
	mmBetween
)

// minimaxM2 is the minimax_m2 tool machine.
type minimaxM2 struct {
	engineCalls
	state mmState
	scan  markerScan
	// slots counts calls started.
	slots  int
	call   engineCall
	params mmParams
	// first holds the first bytes of the markers.
	first *byteSet
}

func newMinimaxM2(v Vocab, req *Request) (toolMachine, error) {
	m := &minimaxM2{}
	m.init(v, req, mmMarkers)
	m.first = newByteSet(orTerminals(m.markers, mmMarkers))
	return m, nil
}

// Push implements toolMachine.
func (m *minimaxM2) Push(text string) (string, []ToolCallDelta) {
	m.run(text, false)
	return m.take()
}

// pushAppend implements callAppender: the push's deltas go after calls.
func (m *minimaxM2) pushAppend(text string, calls []ToolCallDelta) (string, []ToolCallDelta) {
	m.prepend(calls)
	return m.Push(text)
}

// Finish implements toolMachine.
func (m *minimaxM2) Finish() (string, []ToolCallDelta) {
	m.run("", true)
	if m.state != mmContent && m.slots > 0 {
		m.endCall()
	}
	m.state = mmContent
	m.finishContent()
	return m.take()
}

func (m *minimaxM2) run(text string, final bool) {
	for {
		before, marker, rest := scanTerminal(&m.scan, text, orTerminals(m.markers, mmMarkers), m.first, final)
		m.text(before)
		if marker == "" {
			return
		}
		m.terminal(marker)
		text = rest
	}
}

// scanTerminal is markerScan.next with the engine lexer's longest match:
// a terminal that a longer one extends is held while the input cannot yet
// tell them apart. With final set, nothing is held. First holds the
// markers' first bytes: most pushes have none and nothing held, and are
// text whole.
func scanTerminal(m *markerScan, text string, markers []string, first *byteSet, final bool) (before, marker, rest string) {
	if m.held == "" && !first.any(text) {
		m.found.reset()
		return text, "", ""
	}
	s := text
	if m.held != "" {
		s = m.held + text
		m.held = ""
	}
	best, bestLen := m.found.earliest(s, markers)
	if best >= 0 {
		if !final {
			tail := s[best:]
			for _, mk := range markers {
				if len(mk) > len(tail) && strings.HasPrefix(mk, tail) {
					m.found.reset()
					m.held = tail
					return s[:best], "", ""
				}
			}
		}
		rest = s[best+bestLen:]
		m.found.advance(rest, best+bestLen)
		return s[:best], s[best : best+bestLen], rest
	}
	m.found.reset()
	if final {
		return s, "", ""
	}
	keep := partialTail(s, markers)
	m.held = s[len(s)-keep:]
	return s[:len(s)-keep], "", ""
}

// text handles non-terminal text in the current state.
func (m *minimaxM2) text(s string) {
	if s == "" {
		return
	}
	switch m.state {
	case mmContent:
		m.content(s)
	case mmName:
		m.call.rawName = append(m.call.rawName, s...)
	case mmArgs:
		m.args(s, false)
	}
	m.gate.raw(s)
}

// terminal applies the grammar's transition for a terminal; a terminal
// without one is text of the state.
func (m *minimaxM2) terminal(t string) {
	if isDropToken(t, mmMarkers) {
		return
	}
	invoke := t == mmInvokeDQ || t == mmInvokeSQ || t == mmInvokeBare
	switch m.state {
	case mmContent:
		switch {
		case t == mmThinkEnd || t == mmToolEnd:
			m.dropped()
		case t == mmToolStart:
			m.dropped()
			m.state = mmPreamble
		case invoke:
			m.startCall()
		default:
			m.text(t)
			return
		}
	case mmPreamble, mmBetween:
		switch {
		case t == mmToolEnd:
			m.state = mmContent
		case invoke:
			m.startCall()
		}
	case mmName:
		if t != mmNameEndDQ && t != mmNameEndSQ && t != mmNameEndBare {
			m.text(t)
			return
		}
		m.nameDone()
		m.state = mmArgs
	case mmArgs:
		if t != mmInvokeEnd {
			m.text(t)
			return
		}
		m.endCall()
		m.state = mmBetween
	}
	m.gate.raw(t)
}

// dropped is a content terminal that the engine swallows.
func (m *minimaxM2) dropped() {
	if m.mode != engineNoneQuiet {
		m.gate.thinkEnd()
	}
}

func (m *minimaxM2) startCall() {
	m.slots++
	m.call, m.params = engineCall{}, mmParams{}
	m.state = mmName
	m.opened()
}

// nameDone ends the name: a valid (stripped) name makes a call.
func (m *minimaxM2) nameDone() {
	c := &m.call
	if c.nameDone {
		return
	}
	c.nameDone = true
	name := pyStrip(string(c.rawName))
	c.rawName = nil
	if name == "" || !m.knownTool(name) {
		return
	}
	if c.index, c.emitted = m.name(name); c.emitted {
		c.props = toolProperties(m.tools, name)
	}
}

func (m *minimaxM2) args(s string, final bool) {
	c := &m.call
	if !c.emitted {
		return
	}
	var buf [4]xmlParam
	for _, p := range m.params.feed(s, final, buf[:0]) {
		m.param(p)
	}
}

// param emits one completed parameter.
func (m *minimaxM2) param(p xmlParam) {
	c := &m.call
	if head, ok := c.args.key(p.name); ok {
		m.emitArgs(head + paramJSON(c.props, p.name, p.value))
	}
}

func (m *minimaxM2) emitArgs(frag string) {
	m.calls.args(m.call.index, frag)
}

// endCall is TOOL_CALL_END: a name still open ends here too.
func (m *minimaxM2) endCall() {
	c := &m.call
	if c.closed {
		return
	}
	if m.state == mmName {
		m.nameDone()
	}
	c.closed = true
	if !c.emitted {
		return
	}
	m.args("", true)
	m.emitArgs(c.args.end())
	m.params = mmParams{}
}

// mmParams reads parameters out of a streamed invoke body the way vLLM's
// _minimax_m2_arg_converter regex does:
//
//	<\s*parameter\s+name\s*=\s*(?:"([^"]*)"|'([^']*)'|([^>\s]+))\s*>(.*?)(?:<\s*/\s*parameter\s*>|(?=<\s*parameter\s+name\s*=))
//
// Names are stripped and empty ones skipped; values are verbatim.
type mmParams struct {
	xmlBody
	open mmOpenScan
}

var (
	mmHeadPat  = []tagElem{lit("<"), wsStar, lit("parameter"), wsPlus, lit("name"), wsStar, lit("="), wsStar}
	mmAheadPat = mmHeadPat[:len(mmHeadPat)-1]
)

// feed consumes body text; final marks the end of the body, where a tag
// still undecided does not match.
func (x *mmParams) feed(text string, final bool, out []xmlParam) []xmlParam {
	x.buf = append(x.buf, text...)
	for {
		at, fresh, ok := x.nextTag()
		if !ok {
			return out
		}
		if fresh {
			x.open = mmOpenScan{}
		}
		s := x.buf
		if !x.inValue {
			m, name, end := x.open.match(s, at, final, &x.scanned)
			switch m {
			case tagMore:
				x.holdTag(at)
				return out
			case tagNo:
				x.skipTag(at)
				continue
			}
			x.openValue(pyStrip(name), end)
			continue
		}
		mc, endClose := x.close.match(s, at, paramClosePat, &x.scanned)
		ma := tagNo
		if mc != tagYes {
			ma, _ = x.ahead.match(s, at, mmAheadPat, &x.scanned)
		}
		if final {
			mc, ma = settle(mc), settle(ma)
		}
		switch {
		case mc == tagYes || ma == tagYes:
			if x.name != "" {
				out = append(out, xmlParam{name: x.name, value: string(s[x.valStart:at])})
			}
			rest := at
			if mc == tagYes {
				rest = endClose
			}
			x.endValue(rest)
		case mc == tagMore || ma == tagMore:
			x.pos = at
			return out
		default:
			x.skipTag(at)
		}
	}
}

// settle turns an undecided match into a failed one at the end of input.
func settle(m tagMatch) tagMatch {
	if m == tagMore {
		return tagNo
	}
	return m
}

// mmOpenScan resumes the match of the full opening tag, trying the quoted
// name forms before the bare one as the regex alternation does. Positions
// are relative to the tag's '<'.
type mmOpenScan struct {
	head tagScan
	// started is set once the head matched; K is where the name starts.
	started bool
	k       int
	// quote finds a quoted name's closing quote; QSpace resumes the \s*
	// after it.
	quote  byteSearch
	qSpace int
	// bare resumes [^>\s]+; once BareDone it ended at BareEnd and BSpace
	// resumes the \s* after it.
	bare     int
	bareDone bool
	bareEnd  int
	bSpace   int
}

// match resumes the opening tag's match at s[base]; on tagYes it returns
// the raw name and where the tag ends.
func (o *mmOpenScan) match(s []byte, base int, final bool, scanned *int) (tagMatch, string, int) {
	m, k := o.head.match(s, base, mmHeadPat, scanned)
	if final {
		m = settle(m)
	}
	if m != tagYes {
		return m, "", 0
	}
	if !o.started {
		o.started, o.k = true, k-base
		o.quote, o.qSpace, o.bare = byteSearch{pos: o.k + 1}, 0, o.k
	}
	k = base + o.k
	if q := s[k]; q == '"' || q == '\'' {
		if j := o.quote.find(s, base, q, scanned); j < 0 {
			if !final {
				return tagMore, "", 0
			}
		} else {
			if o.qSpace == 0 {
				o.qSpace = j + 1 - base
			}
			p := base + o.qSpace
			e, more := spaceRun(s, p)
			*scanned += e - p
			o.qSpace = e - base
			switch {
			case more && !final:
				return tagMore, "", 0
			case !more && s[e] == '>':
				return tagYes, string(s[k+1 : j]), e + 1
			}
		}
	}
	// [^>\s]+\s*>
	if !o.bareDone {
		p := base + o.bare
		e, more := nameRun(s, p)
		*scanned += e - p
		o.bare = e - base
		switch {
		case more && final:
			return tagNo, "", 0
		case more:
			return tagMore, "", 0
		case e == k:
			return tagNo, "", 0
		}
		o.bareDone, o.bareEnd, o.bSpace = true, e-base, e-base
	}
	p := base + o.bSpace
	f, more := spaceRun(s, p)
	*scanned += f - p
	o.bSpace = f - base
	switch {
	case more && final:
		return tagNo, "", 0
	case more:
		return tagMore, "", 0
	case s[f] != '>':
		return tagNo, "", 0
	}
	return tagYes, string(s[k : base+o.bareEnd]), f + 1
}

// codec saves and restores the state of a minimaxM2.
func (m *minimaxM2) codec(c *statecodec.Codec) {
	statecodec.Enum(c, &m.mode, 3)
	statecodec.Enum(c, &m.state, 5)
	m.scan.codec(c)
	// tools is the request's, not state.
	m.gate.codec(c)
	c.Int(&m.slots)
	c.Bool(&m.named)
	c.Int(&m.nCalls)
	m.call.codec(c, &m.params)
}

// codec saves and restores the state of a mmOpenScan.
func (o *mmOpenScan) codec(c *statecodec.Codec) {
	o.head.codec(c)
	c.Bool(&o.started)
	c.Int(&o.k)
	o.quote.codec(c)
	c.Int(&o.qSpace)
	c.Int(&o.bare)
	c.Bool(&o.bareDone)
	c.Int(&o.bareEnd)
	c.Int(&o.bSpace)
}

// codec saves and restores the state of an mmParams.
func (x *mmParams) codec(c *statecodec.Codec) { x.xmlBody.codec(c, &x.open) }

// check checks a decoded opening-tag match against its buffer's room.
func (o *mmOpenScan) check(c *statecodec.Codec, room int) {
	o.head.check(c, room)
	o.quote.check(c, room)
	c.Within(room, o.k, o.qSpace, o.bare, o.bareEnd, o.bSpace)
}
