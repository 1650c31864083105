package parsers

import (
	"github.com/vrender/vrender/parsers/pyjson"

	"github.com/vrender/vrender/internal/statecodec"
)

// Hermes tool calls, as vLLM's Hermes2ProToolParser.extract_tool_calls:
// content is the text before the first "<tool_call>"; each
// "<tool_call>BODY</tool_call>" (or "<tool_call>BODY" to the end) must be a
// JSON object with "name" (a string) and "arguments", re-serialised with
// json.dumps(ensure_ascii=False); text between and after calls is dropped.
// If any call fails to parse, vLLM returns no calls and the whole text as
// content: this machine streams calls optimistically and, on failure,
// reports Called() == false and hands the held-back raw text out as content
// from Finish.

// hermesPhase is where a hermes machine is.
type hermesPhase uint8

const (
	hermesText    hermesPhase = iota // before the first "<tool_call>"
	hermesBody                       // inside a call body
	hermesBetween                    // after a "</tool_call>"
	hermesFailed                     // a call failed to parse
)

// hermes is the hermes tool-call machine.
type hermes struct {
	phase hermesPhase
	scan  markerScan
	// raw is the text from the first "<tool_call>" on: the content vLLM
	// returns if a call fails to parse.
	raw []byte
	// rawDropped is set once a streamed call went out: the client has the
	// call, so the non-streaming fallback can no longer be reached and Raw
	// stops growing (a checkpoint stays flat inside a long call).
	rawDropped bool
	// calls is the number of calls started.
	calls int
	call  jsonCall

	streaming bool // set by SetStreaming; configuration, not state
}

// setStreaming implements streamingMachine.
func (h *hermes) setStreaming() { h.streaming = true }

// keep appends to Raw unless it was dropped.
func (h *hermes) keep(parts ...string) {
	if h.rawDropped {
		return
	}
	for _, s := range parts {
		h.raw = append(h.raw, s...)
	}
}

// dropRaw forgets Raw once a streamed call has gone out.
func (h *hermes) dropRaw() {
	if h.streaming && !h.rawDropped && (h.call.named || h.calls > 1) {
		h.raw, h.rawDropped = nil, true
	}
}

func newHermes(Vocab, *Request) (toolMachine, error) { return &hermes{}, nil }

var (
	hermesOpenMarkers  = []string{toolCallStart}
	hermesCloseMarkers = []string{toolCallEnd}
)

// Push implements toolMachine.
func (h *hermes) Push(text string) (content string, calls []ToolCallDelta) {
	return h.pushAppend(text, nil)
}

// pushAppend implements callAppender.
func (h *hermes) pushAppend(text string, calls []ToolCallDelta) (content string, _ []ToolCallDelta) {
	defer h.dropRaw()
	for {
		switch h.phase {
		case hermesFailed:
			h.keep(h.scan.flush(), text)
			return content, calls
		case hermesText, hermesBetween:
			before, marker, rest := h.scan.next(text, hermesOpenMarkers)
			if h.phase == hermesText {
				content = concat(content, before)
			} else {
				h.keep(before)
			}
			if marker == "" {
				return content, calls
			}
			h.keep(marker)
			h.phase = hermesBody
			h.call = jsonCall{index: h.calls}
			h.calls++
			text = rest
		case hermesBody:
			before, marker, rest := h.scan.next(text, hermesCloseMarkers)
			h.keep(before, marker)
			calls = h.call.feed(before, calls)
			if marker == "" {
				if h.call.failed {
					h.phase = hermesFailed
				}
				return content, calls
			}
			if calls = h.call.end(calls); h.call.failed {
				h.phase = hermesFailed
				text = rest
				continue
			}
			h.phase = hermesBetween
			text = rest
		}
	}
}

// Finish implements toolMachine.
func (h *hermes) Finish() (content string, calls []ToolCallDelta) {
	held := h.scan.flush()
	switch h.phase {
	case hermesText:
		return held, nil
	case hermesBody:
		h.keep(held)
		calls = h.call.feed(held, calls)
		if calls = h.call.end(calls); h.call.failed {
			h.phase = hermesFailed
		}
	default:
		h.keep(held)
	}
	if h.phase == hermesFailed && !h.rawDropped {
		return string(h.raw), calls
	}
	return "", calls
}

// Called implements toolMachine.
func (h *hermes) Called() bool { return h.phase != hermesFailed && h.calls > 0 }

// jsonCall reads one {"name": ..., "arguments": ...} object, streaming the
// name once complete and the arguments re-serialised as they arrive.
type jsonCall struct {
	index int
	obj   pyjson.Object
	// nameCanon collects the canonical "name" value.
	nameCanon []byte
	// named is set once the name went out; Args holds arguments read
	// before that.
	named   bool
	args    []byte
	hasArgs bool
	// ArgsKey is the field carrying the arguments ("arguments" for hermes).
	argsField string
	failed    bool

	// out collects the deltas of the current feed; not state.
	out deltaSink
}

func (c *jsonCall) argsKey() string {
	if c.argsField == "" {
		return "arguments"
	}
	return c.argsField
}

// feed consumes body text; anything but whitespace after the object fails.
func (c *jsonCall) feed(text string, calls []ToolCallDelta) []ToolCallDelta {
	if c.failed || text == "" {
		return calls
	}
	c.out.calls = calls
	if !c.obj.Done() {
		// The call is its own field sink: a pointer already on the heap,
		// so routing the fields costs no allocation per push.
		n, err := c.obj.Feed(text, c)
		if err != nil {
			c.failed = true
			return c.out.take()
		}
		text = text[n:]
	}
	if !isJSONSpace(text) {
		c.failed = true
	}
	return c.out.take()
}

// end validates the finished call.
func (c *jsonCall) end(calls []ToolCallDelta) []ToolCallDelta {
	if c.failed {
		return calls
	}
	if c.obj.End() != nil || !c.hasArgs || !c.named {
		c.failed = true
	}
	return calls
}

// Field implements pyjson.FieldSink.
func (c *jsonCall) Field(key string) {
	switch key {
	case "name":
		c.nameCanon = c.nameCanon[:0]
	case c.argsKey():
		if c.hasArgs {
			// A repeated key: Python keeps the last value; this machine has
			// streamed the first and marks the call failed instead.
			c.failed = true
		}
		c.hasArgs = true
	}
}

// FieldBytes implements pyjson.FieldSink.
func (c *jsonCall) FieldBytes(key string, canon []byte) {
	switch key {
	case "name":
		c.nameCanon = append(c.nameCanon, canon...)
	case c.argsKey():
		if c.named {
			c.out.argsBytes(c.index, canon)
		} else {
			c.args = append(c.args, canon...)
		}
	}
}

// FieldString implements pyjson.FieldStringSink: a streamed argument
// piece that is verbatim input goes out as a substring, uncopied.
func (c *jsonCall) FieldString(key string, canon string) {
	if key == c.argsKey() && c.named {
		c.out.args(c.index, canon)
		return
	}
	switch key {
	case "name":
		c.nameCanon = append(c.nameCanon, canon...)
	case c.argsKey():
		c.args = append(c.args, canon...)
	}
}

// FieldEnd implements pyjson.FieldSink.
func (c *jsonCall) FieldEnd(key string) {
	if key != "name" {
		return
	}
	name, ok := decodeString(c.nameCanon)
	if !ok || c.named {
		c.failed = true
		return
	}
	c.named = true
	c.out.add(ToolCallDelta{Index: c.index, ID: newToolCallID(), Type: "function", Name: name})
	if len(c.args) > 0 {
		c.out.args(c.index, string(c.args))
		c.args = nil
	}
}

// codec saves and restores the state of a hermes.
func (h *hermes) codec(c *statecodec.Codec) {
	statecodec.Enum(c, &h.phase, 4)
	h.scan.codec(c)
	c.ByteSlice(&h.raw)
	c.Bool(&h.rawDropped)
	c.Int(&h.calls)
	h.call.codec(c)
}

// codec saves and restores the state of a jsonCall.
func (c *jsonCall) codec(sc *statecodec.Codec) {
	sc.Int(&c.index)
	c.obj.Codec(sc)
	sc.ByteSlice(&c.nameCanon)
	sc.Bool(&c.named)
	sc.ByteSlice(&c.args)
	sc.Bool(&c.hasArgs)
	sc.String(&c.argsField)
	sc.Bool(&c.failed)
}
