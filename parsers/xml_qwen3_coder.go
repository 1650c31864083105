package parsers

import "github.com/vrender/vrender/internal/statecodec"

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

// The qwen3 grammar's terminals; vLLM lexes all of them in every state.
const (
	qcFuncPrefix = "<function="
	qcFuncEnd    = "</function>"
	qcParamStart = "<parameter="
	qcParamEnd   = "</parameter>"
	qcCloseAngle = ">"
)

var qcMarkers = []string{thinkStart, thinkEnd, toolCallStart, toolCallEnd, qcFuncPrefix,
	qcFuncEnd, qcParamStart, qcParamEnd, qcCloseAngle}

// qcState is the grammar's parser state.
type qcState uint8

const (
	qcContent qcState = iota
	qcPreamble
	qcName
	qcArgs
	qcBetween
)

// qwen3Coder is the qwen3_coder / qwen3_xml tool machine.
type qwen3Coder struct {
	engineCalls
	state qcState
	scan  markerScan
	// slots counts calls started.
	slots  int
	call   engineCall
	params xmlParams
}

func newQwen3Coder(v Vocab, req *Request) (toolMachine, error) {
	q := &qwen3Coder{}
	q.init(v, req, qcMarkers)
	return q, nil
}

// Push implements toolMachine.
func (q *qwen3Coder) Push(text string) (string, []ToolCallDelta) {
	for {
		before, marker, rest := q.scan.next(text, orTerminals(q.markers, qcMarkers))
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
func (q *qwen3Coder) pushAppend(text string, calls []ToolCallDelta) (string, []ToolCallDelta) {
	q.prepend(calls)
	return q.Push(text)
}

// Finish implements toolMachine.
func (q *qwen3Coder) Finish() (string, []ToolCallDelta) {
	q.text(q.scan.flush())
	if q.state != qcContent && q.slots > 0 {
		q.endCall()
	}
	q.state = qcContent
	q.finishContent()
	return q.take()
}

// text handles non-terminal text in the current state.
func (q *qwen3Coder) text(s string) {
	if s == "" {
		return
	}
	switch q.state {
	case qcContent:
		q.content(s)
	case qcName:
		q.call.rawName = append(q.call.rawName, s...)
	case qcArgs:
		q.args(s)
	}
	q.gate.raw(s)
}

// terminal applies the grammar's transition for a terminal; a terminal
// without one is text of the state.
func (q *qwen3Coder) terminal(t string) {
	if isDropToken(t, qcMarkers) {
		return
	}
	switch q.state {
	case qcContent:
		switch t {
		case thinkEnd:
			q.gate.thinkEnd()
		case toolCallStart:
			q.startCall(qcPreamble)
		case qcFuncPrefix:
			q.startCall(qcName)
		default:
			q.text(t)
			return
		}
	case qcPreamble:
		switch t {
		case toolCallEnd:
			q.endCall()
			q.state = qcContent
		case qcFuncPrefix:
			q.state = qcName
		}
	case qcName:
		switch t {
		case qcCloseAngle:
			q.nameDone()
			q.state = qcArgs
		case qcFuncEnd:
			q.endCall()
			q.state = qcBetween
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
		q.state = qcBetween
	case qcBetween:
		switch t {
		case toolCallEnd:
			q.state = qcContent
		case toolCallStart:
			q.startCall(qcPreamble)
		case qcFuncPrefix:
			q.startCall(qcName)
		}
	}
	q.gate.raw(t)
}

func (q *qwen3Coder) startCall(next qcState) {
	q.slots++
	q.call, q.params = engineCall{}, xmlParams{}
	q.state = next
	q.opened()
}

// nameDone ends the name: a non-empty (stripped) name makes a call.
func (q *qwen3Coder) nameDone() {
	c := &q.call
	if c.nameDone {
		return
	}
	c.nameDone = true
	name := pyStrip(string(c.rawName))
	c.rawName = nil
	if name == "" {
		return
	}
	if c.index, c.emitted = q.name(name); c.emitted {
		c.props = toolProperties(q.tools, name)
	}
}

func (q *qwen3Coder) args(s string) {
	c := &q.call
	if !c.emitted {
		return
	}
	var buf [4]xmlParam
	for _, p := range q.params.feed(s, buf[:0]) {
		q.param(p)
	}
}

// param emits one completed parameter.
func (q *qwen3Coder) param(p xmlParam) {
	c := &q.call
	if head, ok := c.args.key(p.name); ok {
		q.emitArgs(head + paramJSON(c.props, p.name, p.value))
	}
}

func (q *qwen3Coder) emitArgs(frag string) {
	q.calls.args(q.call.index, frag)
}

// endCall is TOOL_CALL_END: a name still open ends here too.
func (q *qwen3Coder) endCall() {
	c := &q.call
	if c.closed {
		return
	}
	if q.state == qcName {
		q.nameDone()
	}
	c.closed = true
	if !c.emitted {
		return
	}
	q.emitArgs(c.args.end())
	q.params = xmlParams{}
}

// codec saves and restores the state of a qwen3Coder.
func (q *qwen3Coder) codec(c *statecodec.Codec) {
	statecodec.Enum(c, &q.mode, 3)
	statecodec.Enum(c, &q.state, 5)
	q.scan.codec(c)
	// tools is the request's, not state.
	q.gate.codec(c)
	c.Int(&q.slots)
	c.Bool(&q.named)
	c.Int(&q.nCalls)
	q.call.codec(c, &q.params)
}
