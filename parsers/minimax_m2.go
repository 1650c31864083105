package parsers

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

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
	registerTool("minimax_m2", ToolInfo{New: newMinimaxM2, NeedsSpecialTokens: true, EngineBased: true})
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
	calls []ToolCallDelta
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

func newMinimaxM2(_ Vocab, req *Request) (ToolMachine, error) {
	m := &MinimaxM2{Tools: req.Tools}
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
	out, calls := m.out.String(), m.calls
	m.out.Reset()
	m.calls = nil
	return out, calls
}

func (m *MinimaxM2) run(text string, final bool) {
	for {
		before, marker, rest := scanTerminal(&m.Scan, text, mmMarkers, final)
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
	s := m.Held + text
	m.Held = ""
	best, bestLen := -1, 0
	for _, mk := range markers {
		if i := strings.Index(s, mk); i >= 0 && (best < 0 || i < best || i == best && len(mk) > bestLen) {
			best, bestLen = i, len(mk)
		}
	}
	if best >= 0 {
		if !final {
			tail := s[best:]
			for _, mk := range markers {
				if len(mk) > len(tail) && strings.HasPrefix(mk, tail) {
					m.Held = tail
					return s[:best], "", ""
				}
			}
		}
		return s[:best], s[best : best+bestLen], s[best+bestLen:]
	}
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
	m.calls = append(m.calls, ToolCallDelta{Index: c.Index, ID: newToolCallID(), Type: "function", Name: name})
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
	m.calls = appendArgs(m.calls, m.Call.Index, frag)
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
// '<' is examined once unless a tag starting there is cut off by the end
// of the input so far.
type mmParams struct {
	Buf      []byte
	Pos      int
	InValue  bool
	Name     string
	ValStart int
}

// feed consumes body text; final marks the end of the body, where a tag
// still undecided does not match.
func (x *mmParams) feed(text string, final bool, out []xmlParam) []xmlParam {
	x.Buf = append(x.Buf, text...)
	for {
		i := bytes.IndexByte(x.Buf[x.Pos:], '<')
		if i < 0 {
			if x.InValue {
				x.Pos = len(x.Buf)
			} else {
				x.Buf, x.Pos = x.Buf[:0], 0
			}
			return out
		}
		at := x.Pos + i
		s := x.Buf
		if !x.InValue {
			m, name, end := mmOpenTag(s, at, final)
			switch m {
			case tagMore:
				x.Buf, x.Pos = append(x.Buf[:0], x.Buf[at:]...), 0
				return out
			case tagNo:
				x.Pos = at + 1
				continue
			}
			x.Name = pyStrip(name)
			x.InValue, x.ValStart, x.Pos = true, end, end
			continue
		}
		mc, endClose := matchCloseTag(s, at)
		ma := tagNo
		if mc != tagYes {
			ma = mmAheadTag(s, at)
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
			x.Buf, x.Pos = append(x.Buf[:0], x.Buf[rest:]...), 0
			x.InValue = false
		case mc == tagMore || ma == tagMore:
			x.Pos = at
			return out
		default:
			x.Pos = at + 1
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

// mmAheadTag matches <\s*parameter\s+name\s*= at s[i].
func mmAheadTag(s []byte, i int) tagMatch {
	m, _ := mmTagHead(s, i)
	return m
}

// mmTagHead matches <\s*parameter\s+name\s*= at s[i] and returns where it
// ends.
func mmTagHead(s []byte, i int) (tagMatch, int) {
	m, j := matchSeq(s, i, mmParamOpenLit)
	if m != tagYes {
		return m, 0
	}
	k := skipRegexSpace(s, j)
	if k == len(s) {
		return tagMore, 0
	}
	if k == j {
		return tagNo, 0
	}
	if m, k = matchLit(s, k, "name"); m != tagYes {
		return m, 0
	}
	k = skipRegexSpace(s, k)
	if k == len(s) {
		return tagMore, 0
	}
	if m, k = matchLit(s, k, "="); m != tagYes {
		return m, 0
	}
	return tagYes, k
}

// mmOpenTag matches the full opening tag at s[i], trying the quoted forms
// before the bare one as the regex alternation does.
func mmOpenTag(s []byte, i int, final bool) (tagMatch, string, int) {
	m, k := mmTagHead(s, i)
	if m == tagYes {
		if k = skipRegexSpace(s, k); k == len(s) {
			m = tagMore
		}
	}
	if final {
		m = settle(m)
	}
	if m != tagYes {
		return m, "", 0
	}
	for _, q := range []byte{'"', '\''} {
		if s[k] != q {
			continue
		}
		j := bytes.IndexByte(s[k+1:], q)
		if j < 0 {
			if !final {
				return tagMore, "", 0
			}
			break
		}
		e := skipRegexSpace(s, k+1+j+1)
		if e == len(s) {
			if !final {
				return tagMore, "", 0
			}
			break
		}
		if s[e] == '>' {
			return tagYes, string(s[k+1 : k+1+j]), e + 1
		}
		break
	}
	// [^>\s]+\s*>
	e := k
	for e < len(s) {
		r, n := utf8.DecodeRune(s[e:])
		if r == '>' || pyIsSpace(r) {
			break
		}
		e += n
	}
	if e == k {
		return tagNo, "", 0
	}
	f := skipRegexSpace(s, e)
	if f == len(s) {
		if final {
			return tagNo, "", 0
		}
		return tagMore, "", 0
	}
	if s[f] != '>' {
		return tagNo, "", 0
	}
	return tagYes, string(s[k:e]), f + 1
}
