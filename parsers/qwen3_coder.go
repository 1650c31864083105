package parsers

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/vrender/vrender/parsers/pyjson"
)

// Qwen3-Coder XML tool calls, as vLLM's Qwen3EngineToolParser (the
// declarative ParserEngine with the qwen3 grammar; vLLM registers both
// "qwen3_coder" and "qwen3_xml" to it) runs on reasoning-stripped content
// (extract_tool_calls_from_content):
//
//	<tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n</function>\n</tool_call>
//
// The text is lexed into the grammar's terminals; a bare "<function=" also
// opens a call, "</think>" in content is dropped, text between and after
// calls is dropped. A call counts once its name (stripped) is non-empty;
// arguments are the parameters re-serialised in order, each value coerced
// by the tool's JSON schema (schema_coerce.go). A value still open at the
// end is dropped, so each parameter goes out whole once closed (a streamed
// prefix could not be withdrawn); the name goes out once complete. With calls, content is the text before the first call,
// stripped; without, it is the text unchanged. vLLM's engine-based path
// also runs the parser for tool_choice "none" (then content keeps the text
// outside calls and calls are dropped).
//
// Known deviations (pathological outputs): a repeated parameter name keeps
// its first value (Python keeps the first position with the last value); a
// call whose name is empty never borrows a "name" from its body.

func init() {
	for _, name := range []string{"qwen3_coder", "qwen3_xml"} {
		registerTool(name, ToolInfo{New: newQwen3Coder, NeedsSpecialTokens: true, EngineBased: true,
			SupportsRequiredAndNamed: true, StructuralTagModel: "qwen_3_coder"})
	}
}

// The qwen3 grammar's terminals; vLLM lexes all of them in every state.
const (
	qcThinkStart = "<think>"
	qcThinkEnd   = "</think>"
	qcToolStart  = "<tool_call>"
	qcToolEnd    = "</tool_call>"
	qcFuncPrefix = "<function="
	qcFuncEnd    = "</function>"
	qcParamStart = "<parameter="
	qcParamEnd   = "</parameter>"
	qcCloseAngle = ">"
)

var qcMarkers = []string{qcThinkStart, qcThinkEnd, qcToolStart, qcToolEnd, qcFuncPrefix,
	qcFuncEnd, qcParamStart, qcParamEnd, qcCloseAngle}

// qcMode is how the request uses the parser.
type qcMode uint8

const (
	qcAuto      qcMode = iota // tool calls are parsed and returned
	qcNoneQuiet               // tool_choice "none" with tools: calls suppressed
	qcNoneOpen                // no tools: calls parsed, then dropped
)

// qcState is the grammar's parser state.
type qcState uint8

const (
	qcContent qcState = iota
	qcPreamble
	qcName
	qcArgs
	qcBetween
)

// Qwen3Coder is the qwen3_coder / qwen3_xml tool machine.
type Qwen3Coder struct {
	Mode  qcMode
	State qcState
	Scan  markerScan
	Tools []Tool
	Gate  qcGate
	// Slots counts calls started; Named is set once one has a name
	// (vLLM's tools_called); Calls counts calls emitted.
	Slots int
	Named bool
	Calls int
	Call  qcCall

	// out and calls collect one Push's results.
	out   strings.Builder
	calls deltaSink
	// markers are qcMarkers and the special tokens to drop (engine_drop.go).
	markers []string
}

// qcCall is the call being read.
type qcCall struct {
	RawName  []byte
	NameDone bool
	Emitted  bool
	Closed   bool
	Index    int
	Props    map[string]json.RawMessage
	Params   xmlParams
	NParams  int
	Seen     map[string]bool
}

func newQwen3Coder(v Vocab, req *Request) (ToolMachine, error) {
	q := &Qwen3Coder{Tools: req.Tools, markers: engineTerminals(v, qcMarkers)}
	if choice, _, _ := req.Choice(); choice == ChoiceNone {
		q.Mode = qcNoneOpen
		if len(req.Tools) > 0 {
			q.Mode = qcNoneQuiet
		}
	}
	q.Gate.Auto = q.Mode == qcAuto
	return q, nil
}

// Push implements ToolMachine.
func (q *Qwen3Coder) Push(text string) (string, []ToolCallDelta) {
	for {
		before, marker, rest := q.Scan.next(text, orTerminals(q.markers, qcMarkers))
		q.text(before)
		if marker == "" {
			break
		}
		q.terminal(marker)
		text = rest
	}
	return q.take()
}

// pushAppend implements callAppender: the push's deltas go after calls.
func (q *Qwen3Coder) pushAppend(text string, calls []ToolCallDelta) (string, []ToolCallDelta) {
	q.calls.calls = append(calls, q.calls.calls...)
	return q.Push(text)
}

// Finish implements ToolMachine.
func (q *Qwen3Coder) Finish() (string, []ToolCallDelta) {
	q.text(q.Scan.flush())
	if q.State != qcContent && q.Slots > 0 {
		q.endCall()
	}
	q.State = qcContent
	if q.Mode != qcNoneQuiet {
		q.Gate.finish(&q.out)
	}
	return q.take()
}

// Called implements ToolMachine.
func (q *Qwen3Coder) Called() bool { return q.Mode == qcAuto && q.Named }

// ContentNull reports whether an empty content is null: with tool_choice
// "none" vLLM's engine path returns its own content, None when empty.
func (q *Qwen3Coder) ContentNull() (null, decided bool) {
	return q.Mode != qcAuto, q.Mode != qcAuto
}

func (q *Qwen3Coder) take() (string, []ToolCallDelta) {
	out, calls := q.out.String(), q.calls.take()
	q.out.Reset()
	return out, calls
}

// text handles non-terminal text in the current state.
func (q *Qwen3Coder) text(s string) {
	if s == "" {
		return
	}
	switch q.State {
	case qcContent:
		q.content(s)
	case qcName:
		q.Call.RawName = append(q.Call.RawName, s...)
	case qcArgs:
		q.args(s)
	}
	q.Gate.raw(s)
}

func (q *Qwen3Coder) content(s string) {
	if q.Mode == qcNoneQuiet {
		q.out.WriteString(s)
		return
	}
	q.Gate.content(&q.out, s)
}

// terminal applies the grammar's transition for a terminal; a terminal
// without one is text of the state.
func (q *Qwen3Coder) terminal(t string) {
	if isDropToken(t, qcMarkers) {
		return
	}
	switch q.State {
	case qcContent:
		switch t {
		case qcThinkEnd:
			q.Gate.thinkEnd()
		case qcToolStart:
			q.startCall(qcPreamble)
		case qcFuncPrefix:
			q.startCall(qcName)
		default:
			q.text(t)
			return
		}
	case qcPreamble:
		switch t {
		case qcToolEnd:
			q.endCall()
			q.State = qcContent
		case qcFuncPrefix:
			q.State = qcName
		}
	case qcName:
		switch t {
		case qcCloseAngle:
			q.nameDone()
			q.State = qcArgs
		case qcFuncEnd:
			q.endCall()
			q.State = qcBetween
		default:
			q.text(t)
			return
		}
	case qcArgs:
		if t != qcFuncEnd {
			q.text(t)
			return
		}
		q.endCall()
		q.State = qcBetween
	case qcBetween:
		switch t {
		case qcToolEnd:
			q.State = qcContent
		case qcToolStart:
			q.startCall(qcPreamble)
		case qcFuncPrefix:
			q.startCall(qcName)
		}
	}
	q.Gate.raw(t)
}

func (q *Qwen3Coder) startCall(next qcState) {
	q.Slots++
	q.Call = qcCall{}
	q.State = next
	if q.Mode != qcNoneQuiet {
		q.Gate.toolStart()
	}
}

// nameDone ends the name: a non-empty (stripped) name makes a call.
func (q *Qwen3Coder) nameDone() {
	c := &q.Call
	if c.NameDone {
		return
	}
	c.NameDone = true
	name := pyStrip(string(c.RawName))
	c.RawName = nil
	if name == "" {
		return
	}
	if !q.Named {
		q.Named = true
		if q.Mode != qcNoneQuiet {
			q.Gate.called(&q.out)
		}
	}
	if q.Mode != qcAuto {
		return
	}
	c.Emitted, c.Index = true, q.Calls
	q.Calls++
	c.Props = toolProperties(q.Tools, name)
	q.calls.add(ToolCallDelta{Index: c.Index, ID: newToolCallID(), Type: "function", Name: name})
}

func (q *Qwen3Coder) args(s string) {
	c := &q.Call
	if !c.Emitted {
		return
	}
	var buf [4]xmlParam
	for _, p := range c.Params.feed(s, buf[:0]) {
		q.param(p)
	}
}

// paramHead starts a parameter: separator, key and colon.
func (q *Qwen3Coder) paramHead(key string) string {
	c := &q.Call
	if c.Seen == nil {
		c.Seen = map[string]bool{}
	}
	c.Seen[key] = true
	sep := ", "
	if c.NParams == 0 {
		sep = "{"
	}
	c.NParams++
	return sep + pyjson.Quote(key) + ": "
}

// param emits one completed parameter.
func (q *Qwen3Coder) param(p xmlParam) {
	c := &q.Call
	if c.Seen[p.Name] {
		return
	}
	var b strings.Builder
	b.WriteString(q.paramHead(p.Name))
	b.WriteString(paramJSON(c.Props, p.Name, p.Value))
	q.emitArgs(b.String())
}

func (q *Qwen3Coder) emitArgs(frag string) {
	q.calls.args(q.Call.Index, frag)
}

// endCall is TOOL_CALL_END: a name still open ends here too.
func (q *Qwen3Coder) endCall() {
	c := &q.Call
	if c.Closed {
		return
	}
	if q.State == qcName {
		q.nameDone()
	}
	c.Closed = true
	if !c.Emitted {
		return
	}
	if c.NParams == 0 {
		q.emitArgs("{}")
	} else {
		q.emitArgs("}")
	}
	c.Params = xmlParams{}
}

// qcGate decides what content vLLM returns, emitting it as soon as it is
// the same whichever way the output ends. With calls the answer is the
// stripped text before the first call ("E"); without, in auto mode, it is
// the raw text ("R"), in the no-tools "none" mode E unstripped. Until a
// difference appears (leading whitespace, a dropped "</think>", a call
// opener), E and R agree and stream, minus trailing whitespace; after it,
// text is held until a call is named or the output ends.
type qcGate struct {
	Auto bool
	// Decided is set once a call is named; later content is dropped.
	Decided  bool
	Diverged bool
	// Any is set once content went out.
	Any bool
	// Trail is whitespace held while not diverged.
	Trail []byte
	// ToolSeen is set at the first call opener: E stops there.
	ToolSeen bool
	// E, R and T (text after the first call) since the divergence.
	E, R, T []byte
}

func (g *qcGate) diverge() {
	if g.Diverged {
		return
	}
	g.Diverged = true
	g.E = append(g.E, g.Trail...)
	if g.Auto {
		g.R = append(g.R, g.Trail...)
	}
	g.Trail = g.Trail[:0]
}

// raw takes every piece of text after the semantic handlers saw it.
func (g *qcGate) raw(s string) {
	if g.Auto && g.Diverged && !g.Decided {
		g.R = append(g.R, s...)
	}
}

func (g *qcGate) content(out *strings.Builder, s string) {
	switch {
	case g.Decided:
	case g.ToolSeen:
		g.T = append(g.T, s...)
	case g.Diverged:
		g.E = append(g.E, s...)
	default:
		g.safe(out, s)
	}
}

// safe streams text while E and R agree, holding trailing whitespace.
func (g *qcGate) safe(out *strings.Builder, s string) {
	cut := len(strings.TrimRightFunc(s, pyIsSpace))
	if cut == 0 {
		g.Trail = append(g.Trail, s...)
		return
	}
	if !g.Any {
		if r, _ := utf8.DecodeRuneInString(s); len(g.Trail) > 0 || pyIsSpace(r) {
			// Leading whitespace: stripped if a call follows.
			g.diverge()
			g.E = append(g.E, s...)
			return
		}
	}
	out.Write(g.Trail)
	out.WriteString(s[:cut])
	g.Trail = append(g.Trail[:0], s[cut:]...)
	g.Any = true
}

func (g *qcGate) thinkEnd() {
	if g.Auto && !g.Decided {
		g.diverge() // R keeps it, E drops it
	}
}

func (g *qcGate) toolStart() {
	if g.ToolSeen || g.Decided {
		return
	}
	g.diverge()
	g.ToolSeen = true
}

// called settles on E, stripped.
func (g *qcGate) called(out *strings.Builder) {
	g.diverge()
	g.Decided = true
	e := strings.TrimRightFunc(string(g.E), pyIsSpace)
	if !g.Any {
		e = strings.TrimLeftFunc(e, pyIsSpace)
	}
	out.WriteString(e)
	g.E, g.R, g.T = nil, nil, nil
}

// finish settles without calls.
func (g *qcGate) finish(out *strings.Builder) {
	switch {
	case g.Decided:
	case !g.Diverged:
		out.Write(g.Trail)
	case g.Auto:
		out.Write(g.R)
	case !g.ToolSeen || g.Any:
		// With text already out, vLLM's reordering (text after a nameless
		// call first) cannot be reproduced; E is kept.
		out.Write(g.E)
	default:
		s := string(g.T) + string(g.E)
		if strings.TrimFunc(s, pyIsSpace) != "" {
			out.WriteString(s)
		}
	}
	g.Trail, g.E, g.R, g.T = nil, nil, nil, nil
}
