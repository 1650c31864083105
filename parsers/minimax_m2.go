package parsers

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/vrender/vrender/parsers/pyjson"
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
// the engine's rules, shared with qwen3_coder through qcGate.
//
// Parameters go out as each completes (a value is only certain at its
// closing tag). Known deviations, as for qwen3_coder: a repeated parameter
// keeps its first value, and a call with an empty name never borrows a
// "name" from a JSON body.

func init() {
	registerTool("minimax_m2", ToolInfo{New: newMinimaxM2, NeedsSpecialTokens: true, EngineBased: true,
		SupportsRequiredAndNamed: true, StructuralTagModel: "minimax"})
}

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

// MinimaxM2 is the minimax_m2 tool machine.
type MinimaxM2 struct {
	Mode  qcMode
	State mmState
	Scan  markerScan
	Tools []Tool
	Gate  qcGate
	// Slots counts calls started; Named is set once one counts (vLLM's
	// tools_called); Calls counts calls emitted.
	Slots int
	Named bool
	Calls int
	Call  mmCall

	out   strings.Builder
	calls deltaSink
	// markers are mmMarkers and the special tokens to drop (engine_drop.go).
	markers []string
}

// mmCall is the call being read.
type mmCall struct {
	RawName  []byte
	NameDone bool
	Emitted  bool
	Closed   bool
	Index    int
	Props    map[string]json.RawMessage
	Params   mmParams
	NParams  int
	Seen     map[string]bool
}

func newMinimaxM2(v Vocab, req *Request) (ToolMachine, error) {
	m := &MinimaxM2{Tools: req.Tools, markers: engineTerminals(v, mmMarkers)}
	if choice, _, _ := req.Choice(); choice == ChoiceNone {
		m.Mode = qcNoneOpen
		if len(req.Tools) > 0 {
			m.Mode = qcNoneQuiet
		}
	}
	m.Gate.Auto = m.Mode == qcAuto
	return m, nil
}

// Push implements ToolMachine.
func (m *MinimaxM2) Push(text string) (string, []ToolCallDelta) {
	m.run(text, false)
	return m.take()
}

// pushAppend implements callAppender: the push's deltas go after calls.
func (m *MinimaxM2) pushAppend(text string, calls []ToolCallDelta) (string, []ToolCallDelta) {
	m.calls.calls = append(calls, m.calls.calls...)
	return m.Push(text)
}

// Finish implements ToolMachine.
func (m *MinimaxM2) Finish() (string, []ToolCallDelta) {
	m.run("", true)
	if m.State != mmContent && m.Slots > 0 {
		m.endCall()
	}
	m.State = mmContent
	if m.Mode != qcNoneQuiet {
		m.Gate.finish(&m.out)
	}
	return m.take()
}

// Called implements ToolMachine.
func (m *MinimaxM2) Called() bool { return m.Mode == qcAuto && m.Named }

// ContentNull reports whether an empty content is null: with tool_choice
// "none" vLLM's engine path returns its own content, None when empty.
func (m *MinimaxM2) ContentNull() (null, decided bool) {
	return m.Mode != qcAuto, m.Mode != qcAuto
}

func (m *MinimaxM2) take() (string, []ToolCallDelta) {
	out, calls := m.out.String(), m.calls.take()
	m.out.Reset()
	return out, calls
}

func (m *MinimaxM2) run(text string, final bool) {
	for {
		before, marker, rest := scanTerminal(&m.Scan, text, orTerminals(m.markers, mmMarkers), final)
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
// tell them apart. With final set, nothing is held.
func scanTerminal(m *markerScan, text string, markers []string, final bool) (before, marker, rest string) {
	s := text
	if m.Held != "" {
		s = m.Held + text
		m.Held = ""
	}
	best, bestLen := m.found.earliest(s, markers)
	if best >= 0 {
		if !final {
			tail := s[best:]
			for _, mk := range markers {
				if len(mk) > len(tail) && strings.HasPrefix(mk, tail) {
					m.found.reset()
					m.Held = tail
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
	m.Held = s[len(s)-keep:]
	return s[:len(s)-keep], "", ""
}

// text handles non-terminal text in the current state.
func (m *MinimaxM2) text(s string) {
	if s == "" {
		return
	}
	switch m.State {
	case mmContent:
		if m.Mode == qcNoneQuiet {
			m.out.WriteString(s)
		} else {
			m.Gate.content(&m.out, s)
		}
	case mmName:
		m.Call.RawName = append(m.Call.RawName, s...)
	case mmArgs:
		m.args(s, false)
	}
	m.Gate.raw(s)
}

// terminal applies the grammar's transition for a terminal; a terminal
// without one is text of the state.
func (m *MinimaxM2) terminal(t string) {
	if isDropToken(t, mmMarkers) {
		return
	}
	invoke := t == mmInvokeDQ || t == mmInvokeSQ || t == mmInvokeBare
	switch m.State {
	case mmContent:
		switch {
		case t == mmThinkEnd || t == mmToolEnd:
			m.dropped()
		case t == mmToolStart:
			m.dropped()
			m.State = mmPreamble
		case invoke:
			m.startCall()
		default:
			m.text(t)
			return
		}
	case mmPreamble, mmBetween:
		switch {
		case t == mmToolEnd:
			m.State = mmContent
		case invoke:
			m.startCall()
		}
	case mmName:
		if t != mmNameEndDQ && t != mmNameEndSQ && t != mmNameEndBare {
			m.text(t)
			return
		}
		m.nameDone()
		m.State = mmArgs
	case mmArgs:
		if t != mmInvokeEnd {
			m.text(t)
			return
		}
		m.endCall()
		m.State = mmBetween
	}
	m.Gate.raw(t)
}

// dropped is a content terminal that the engine swallows.
func (m *MinimaxM2) dropped() {
	if m.Mode != qcNoneQuiet {
		m.Gate.thinkEnd()
	}
}

func (m *MinimaxM2) startCall() {
	m.Slots++
	m.Call = mmCall{}
	m.State = mmName
	if m.Mode != qcNoneQuiet {
		m.Gate.toolStart()
	}
}

// nameDone ends the name: a valid (stripped) name makes a call.
func (m *MinimaxM2) nameDone() {
	c := &m.Call
	if c.NameDone {
		return
	}
	c.NameDone = true
	name := pyStrip(string(c.RawName))
	c.RawName = nil
	if name == "" || !m.knownTool(name) {
		return
	}
	if !m.Named {
		m.Named = true
		if m.Mode != qcNoneQuiet {
			m.Gate.called(&m.out)
		}
	}
	if m.Mode != qcAuto {
		return
	}
	c.Emitted, c.Index = true, m.Calls
	m.Calls++
	c.Props = toolProperties(m.Tools, name)
	m.calls.add(ToolCallDelta{Index: c.Index, ID: newToolCallID(), Type: "function", Name: name})
}

// knownTool is validate_tool_names: without tools any name passes.
func (m *MinimaxM2) knownTool(name string) bool {
	if len(m.Tools) == 0 {
		return true
	}
	for _, t := range m.Tools {
		if (t.Type == "" || t.Type == "function") && t.Function.Name == name {
			return true
		}
	}
	return false
}

func (m *MinimaxM2) args(s string, final bool) {
	c := &m.Call
	if !c.Emitted {
		return
	}
	var buf [4]xmlParam
	for _, p := range c.Params.feed(s, final, buf[:0]) {
		m.param(p)
	}
}

// param emits one completed parameter.
func (m *MinimaxM2) param(p xmlParam) {
	c := &m.Call
	if c.Seen[p.Name] {
		return
	}
	if c.Seen == nil {
		c.Seen = map[string]bool{}
	}
	c.Seen[p.Name] = true
	var b strings.Builder
	if c.NParams == 0 {
		b.WriteByte('{')
	} else {
		b.WriteString(", ")
	}
	c.NParams++
	b.WriteString(pyjson.Quote(p.Name))
	b.WriteString(": ")
	b.WriteString(paramJSON(c.Props, p.Name, p.Value))
	m.emitArgs(b.String())
}

func (m *MinimaxM2) emitArgs(frag string) {
	m.calls.args(m.Call.Index, frag)
}

// endCall is TOOL_CALL_END: a name still open ends here too.
func (m *MinimaxM2) endCall() {
	c := &m.Call
	if c.Closed {
		return
	}
	if m.State == mmName {
		m.nameDone()
	}
	c.Closed = true
	if !c.Emitted {
		return
	}
	m.args("", true)
	if c.NParams == 0 {
		m.emitArgs("{}")
	} else {
		m.emitArgs("}")
	}
	c.Params = mmParams{}
}

// mmParams reads parameters out of a streamed invoke body the way vLLM's
// _minimax_m2_arg_converter regex does:
//
//	<\s*parameter\s+name\s*=\s*(?:"([^"]*)"|'([^']*)'|([^>\s]+))\s*>(.*?)(?:<\s*/\s*parameter\s*>|(?=<\s*parameter\s+name\s*=))
//
// Names are stripped and empty ones skipped; values are verbatim. Each
// byte is examined once: a tag cut off by the end of the input so far is
// resumed where its match stopped, not matched again from its '<'.
type mmParams struct {
	Buf      []byte
	Pos      int
	InValue  bool
	Name     string
	ValStart int
	// TagOn is set while the tag at TagAt (a '<' in Buf) is undecided;
	// Open, Close and Ahead hold how far its match got.
	Open  mmOpenScan
	Close tagScan
	Ahead tagScan
	TagOn bool
	TagAt int

	// scanned counts the bytes examined, for the complexity test.
	scanned int
}

var (
	mmHeadPat  = []tagElem{lit("<"), wsStar, lit("parameter"), wsPlus, lit("name"), wsStar, lit("="), wsStar}
	mmAheadPat = mmHeadPat[:len(mmHeadPat)-1]
	mmClosePat = []tagElem{lit("<"), wsStar, lit("/"), wsStar, lit("parameter"), wsStar, lit(">")}
)

// feed consumes body text; final marks the end of the body, where a tag
// still undecided does not match.
func (x *mmParams) feed(text string, final bool, out []xmlParam) []xmlParam {
	x.Buf = append(x.Buf, text...)
	for {
		i := bytes.IndexByte(x.Buf[x.Pos:], '<')
		if i < 0 {
			x.scanned += len(x.Buf) - x.Pos
			if x.InValue {
				x.Pos = len(x.Buf)
			} else {
				x.Buf, x.Pos = x.Buf[:0], 0
			}
			return out
		}
		x.scanned += i + 1
		at := x.Pos + i
		s := x.Buf
		if !x.TagOn || x.TagAt != at {
			x.TagOn, x.TagAt = true, at
			x.Open, x.Close, x.Ahead = mmOpenScan{}, tagScan{}, tagScan{}
		}
		if !x.InValue {
			m, name, end := x.Open.match(s, at, final, &x.scanned)
			switch m {
			case tagMore:
				if at > 0 {
					x.Buf, x.TagAt = append(x.Buf[:0], x.Buf[at:]...), 0
				}
				x.Pos = 0
				return out
			case tagNo:
				x.Pos, x.TagOn = at+1, false
				continue
			}
			x.Name = pyStrip(name)
			x.InValue, x.ValStart, x.Pos, x.TagOn = true, end, end, false
			continue
		}
		mc, endClose := x.Close.match(s, at, mmClosePat, &x.scanned)
		ma := tagNo
		if mc != tagYes {
			ma, _ = x.Ahead.match(s, at, mmAheadPat, &x.scanned)
		}
		if final {
			mc, ma = settle(mc), settle(ma)
		}
		switch {
		case mc == tagYes || ma == tagYes:
			if x.Name != "" {
				out = append(out, xmlParam{Name: x.Name, Value: string(s[x.ValStart:at])})
			}
			rest := at
			if mc == tagYes {
				rest = endClose
			}
			x.Pos, x.InValue, x.TagOn = rest, false, false
			x.compact()
		case mc == tagMore || ma == tagMore:
			x.Pos = at
			return out
		default:
			x.Pos, x.TagOn = at+1, false
		}
	}
}

// compact drops the consumed text before Pos once it is at least half of
// Buf: dropping it after every parameter would copy the rest of a long
// push once per parameter.
func (x *mmParams) compact() {
	if x.Pos < len(x.Buf)-x.Pos {
		return
	}
	x.Buf, x.Pos = append(x.Buf[:0], x.Buf[x.Pos:]...), 0
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
	Head tagScan
	// Started is set once the head matched; K is where the name starts.
	Started bool
	K       int
	// Quote finds a quoted name's closing quote; QSpace resumes the \s*
	// after it.
	Quote  byteSearch
	QSpace int
	// Bare resumes [^>\s]+; once BareDone it ended at BareEnd and BSpace
	// resumes the \s* after it.
	Bare     int
	BareDone bool
	BareEnd  int
	BSpace   int
}

// match resumes the opening tag's match at s[base]; on tagYes it returns
// the raw name and where the tag ends.
func (o *mmOpenScan) match(s []byte, base int, final bool, scanned *int) (tagMatch, string, int) {
	m, k := o.Head.match(s, base, mmHeadPat, scanned)
	if final {
		m = settle(m)
	}
	if m != tagYes {
		return m, "", 0
	}
	if !o.Started {
		o.Started, o.K = true, k-base
		o.Quote, o.QSpace, o.Bare = byteSearch{Pos: o.K + 1}, 0, o.K
	}
	k = base + o.K
	if q := s[k]; q == '"' || q == '\'' {
		if j := o.Quote.find(s, base, q, scanned); j < 0 {
			if !final {
				return tagMore, "", 0
			}
		} else {
			if o.QSpace == 0 {
				o.QSpace = j + 1 - base
			}
			p := base + o.QSpace
			e, more := spaceRun(s, p)
			*scanned += e - p
			o.QSpace = e - base
			switch {
			case more && !final:
				return tagMore, "", 0
			case !more && s[e] == '>':
				return tagYes, string(s[k+1 : j]), e + 1
			}
		}
	}
	// [^>\s]+\s*>
	if !o.BareDone {
		p := base + o.Bare
		e, more := nameRun(s, p)
		*scanned += e - p
		o.Bare = e - base
		switch {
		case more && final:
			return tagNo, "", 0
		case more:
			return tagMore, "", 0
		case e == k:
			return tagNo, "", 0
		}
		o.BareDone, o.BareEnd, o.BSpace = true, e-base, e-base
	}
	p := base + o.BSpace
	f, more := spaceRun(s, p)
	*scanned += f - p
	o.BSpace = f - base
	switch {
	case more && final:
		return tagNo, "", 0
	case more:
		return tagMore, "", 0
	case s[f] != '>':
		return tagNo, "", 0
	}
	return tagYes, string(s[k : base+o.BareEnd]), f + 1
}
