package parsers

import (
	"encoding/json"
	"github.com/vrender/vrender/internal/statecodec"
	"strings"

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
	mode  engineMode
	state qcState
	scan  markerScan
	tools []Tool
	gate  engineGate
	// slots counts calls started; Named is set once one has a name
	// (vLLM's tools_called); Calls counts calls emitted.
	slots  int
	named  bool
	nCalls int
	call   qcCall

	// out and calls collect one Push's results.
	out   joiner
	calls deltaSink
	// markers are qcMarkers and the special tokens to drop (engine_drop.go).
	markers []string
}

// qcCall is the call being read.
type qcCall struct {
	rawName  []byte
	nameDone bool
	emitted  bool
	closed   bool
	index    int
	props    map[string]json.RawMessage
	params   xmlParams
	nParams  int
	seen     map[string]bool
}

func newQwen3Coder(v Vocab, req *Request) (toolMachine, error) {
	q := &qwen3Coder{tools: req.Tools, markers: engineTerminals(v, qcMarkers)}
	if choice, _, _ := req.Choice(); choice == choiceNone {
		q.mode = engineNoneOpen
		if len(req.Tools) > 0 {
			q.mode = engineNoneQuiet
		}
	}
	q.gate.auto = q.mode == engineAuto
	return q, nil
}

// setStreaming implements streamingMachine.
func (q *qwen3Coder) setStreaming() { q.gate.streaming = true }

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
	q.calls.calls = append(calls, q.calls.calls...)
	return q.Push(text)
}

// Finish implements toolMachine.
func (q *qwen3Coder) Finish() (string, []ToolCallDelta) {
	q.text(q.scan.flush())
	if q.state != qcContent && q.slots > 0 {
		q.endCall()
	}
	q.state = qcContent
	if q.mode != engineNoneQuiet {
		q.gate.finish(&q.out)
	}
	return q.take()
}

// Called implements toolMachine.
func (q *qwen3Coder) Called() bool { return q.mode == engineAuto && q.named }

// ContentNull reports whether an empty content is null: with tool_choice
// "none" vLLM's engine path returns its own content, None when empty.
func (q *qwen3Coder) ContentNull() (null, decided bool) {
	return q.mode != engineAuto, q.mode != engineAuto
}

func (q *qwen3Coder) take() (string, []ToolCallDelta) {
	out, calls := q.out.String(), q.calls.take()
	q.out.Reset()
	return out, calls
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

func (q *qwen3Coder) content(s string) {
	if q.mode == engineNoneQuiet {
		q.out.add(s)
		return
	}
	q.gate.content(&q.out, s)
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
	q.call = qcCall{}
	q.state = next
	if q.mode != engineNoneQuiet {
		q.gate.toolStart()
	}
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
	if !q.named {
		q.named = true
		if q.mode != engineNoneQuiet {
			q.gate.called(&q.out)
		}
	}
	if q.mode != engineAuto {
		return
	}
	c.emitted, c.index = true, q.nCalls
	q.nCalls++
	c.props = toolProperties(q.tools, name)
	q.calls.add(ToolCallDelta{Index: c.index, ID: newToolCallID(), Type: "function", Name: name})
}

func (q *qwen3Coder) args(s string) {
	c := &q.call
	if !c.emitted {
		return
	}
	var buf [4]xmlParam
	for _, p := range c.params.feed(s, buf[:0]) {
		q.param(p)
	}
}

// paramHead starts a parameter: separator, key and colon.
func (q *qwen3Coder) paramHead(key string) string {
	c := &q.call
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	c.seen[key] = true
	sep := ", "
	if c.nParams == 0 {
		sep = "{"
	}
	c.nParams++
	return sep + pyjson.Quote(key) + ": "
}

// param emits one completed parameter.
func (q *qwen3Coder) param(p xmlParam) {
	c := &q.call
	if c.seen[p.name] {
		return
	}
	var b strings.Builder
	b.WriteString(q.paramHead(p.name))
	b.WriteString(paramJSON(c.props, p.name, p.value))
	q.emitArgs(b.String())
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
	if c.nParams == 0 {
		q.emitArgs("{}")
	} else {
		q.emitArgs("}")
	}
	c.params = xmlParams{}
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
	q.call.codec(c)
}

// codec saves and restores the state of a qcCall.
func (q *qcCall) codec(c *statecodec.Codec) {
	c.ByteSlice(&q.rawName)
	c.Bool(&q.nameDone)
	c.Bool(&q.emitted)
	c.Bool(&q.closed)
	c.Int(&q.index)
	statecodec.Map(c, &q.props, (*statecodec.Codec).String, codecRaw)
	q.params.codec(c)
	c.Int(&q.nParams)
	statecodec.Map(c, &q.seen, (*statecodec.Codec).String, (*statecodec.Codec).Bool)
}
