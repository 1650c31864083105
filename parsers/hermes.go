package parsers

import "github.com/vrender/vrender/parsers/pyjson"

// Hermes tool calls, as vLLM's Hermes2ProToolParser.extract_tool_calls:
// content is the text before the first "<tool_call>"; each
// "<tool_call>BODY</tool_call>" (or "<tool_call>BODY" to the end) must be a
// JSON object with "name" (a string) and "arguments", re-serialised with
// json.dumps(ensure_ascii=False); text between and after calls is dropped.
// If any call fails to parse, vLLM returns no calls and the whole text as
// content: this machine streams calls optimistically and, on failure,
// reports Called() == false and hands the held-back raw text out as content
// from Finish.

func init() {
	registerTool("hermes", ToolInfo{New: newHermes, NeedsSpecialTokens: true, SupportsRequiredAndNamed: true, StructuralTagModel: "hermes"})
}

const toolCallOff = "</tool_call>"

// hermesPhase is where a Hermes machine is.
type hermesPhase uint8

const (
	hermesText    hermesPhase = iota // before the first "<tool_call>"
	hermesBody                       // inside a call body
	hermesBetween                    // after a "</tool_call>"
	hermesFailed                     // a call failed to parse
)

// Hermes is the hermes tool-call machine.
type Hermes struct {
	Phase hermesPhase
	Scan  markerScan
	// Raw is the text from the first "<tool_call>" on: the content vLLM
	// returns if a call fails to parse.
	Raw []byte
	// RawDropped is set once a streamed call went out: the client has the
	// call, so the non-streaming fallback can no longer be reached and Raw
	// stops growing (a checkpoint stays flat inside a long call).
	RawDropped bool
	// Calls is the number of calls started.
	Calls int
	Call  jsonCall

	streaming bool // set by SetStreaming; configuration, not state
}

// setStreaming implements streamingMachine.
func (h *Hermes) setStreaming() { h.streaming = true }

// keep appends to Raw unless it was dropped.
func (h *Hermes) keep(parts ...string) {
	if h.RawDropped {
		return
	}
	for _, s := range parts {
		h.Raw = append(h.Raw, s...)
	}
}

// dropRaw forgets Raw once a streamed call has gone out.
func (h *Hermes) dropRaw() {
	if h.streaming && !h.RawDropped && (h.Call.Named || h.Calls > 1) {
		h.Raw, h.RawDropped = nil, true
	}
}

func newHermes(Vocab, *Request) (ToolMachine, error) { return &Hermes{}, nil }

var (
	hermesOpenMarkers  = []string{toolCallOn}
	hermesCloseMarkers = []string{toolCallOff}
)

// Push implements ToolMachine.
func (h *Hermes) Push(text string) (content string, calls []ToolCallDelta) {
	return h.pushAppend(text, nil)
}

// pushAppend implements callAppender.
func (h *Hermes) pushAppend(text string, calls []ToolCallDelta) (content string, _ []ToolCallDelta) {
	defer h.dropRaw()
	for {
		switch h.Phase {
		case hermesFailed:
			h.keep(h.Scan.flush(), text)
			return content, calls
		case hermesText, hermesBetween:
			before, marker, rest := h.Scan.next(text, hermesOpenMarkers)
			if h.Phase == hermesText {
				content = concat(content, before)
			} else {
				h.keep(before)
			}
			if marker == "" {
				return content, calls
			}
			h.keep(marker)
			h.Phase = hermesBody
			h.Call = jsonCall{Index: h.Calls}
			h.Calls++
			text = rest
		case hermesBody:
			before, marker, rest := h.Scan.next(text, hermesCloseMarkers)
			h.keep(before, marker)
			calls = h.Call.feed(before, calls)
			if marker == "" {
				if h.Call.Failed {
					h.Phase = hermesFailed
				}
				return content, calls
			}
			if calls = h.Call.end(calls); h.Call.Failed {
				h.Phase = hermesFailed
				text = rest
				continue
			}
			h.Phase = hermesBetween
			text = rest
		}
	}
}

// Finish implements ToolMachine.
func (h *Hermes) Finish() (content string, calls []ToolCallDelta) {
	held := h.Scan.flush()
	switch h.Phase {
	case hermesText:
		return held, nil
	case hermesBody:
		h.keep(held)
		calls = h.Call.feed(held, calls)
		if calls = h.Call.end(calls); h.Call.Failed {
			h.Phase = hermesFailed
		}
	default:
		h.keep(held)
	}
	if h.Phase == hermesFailed && !h.RawDropped {
		return string(h.Raw), calls
	}
	return "", calls
}

// Called implements ToolMachine.
func (h *Hermes) Called() bool { return h.Phase != hermesFailed && h.Calls > 0 }

// jsonCall reads one {"name": ..., "arguments": ...} object, streaming the
// name once complete and the arguments re-serialised as they arrive.
type jsonCall struct {
	Index int
	Obj   pyjson.Object
	// NameCanon collects the canonical "name" value.
	NameCanon []byte
	// Named is set once the name went out; Args holds arguments read
	// before that.
	Named   bool
	Args    []byte
	HasArgs bool
	// ArgsKey is the field carrying the arguments ("arguments" for hermes).
	ArgsKey string
	Failed  bool

	// out collects the deltas of the current feed; not state.
	out deltaSink
}

func (c *jsonCall) argsKey() string {
	if c.ArgsKey == "" {
		return "arguments"
	}
	return c.ArgsKey
}

// feed consumes body text; anything but whitespace after the object fails.
func (c *jsonCall) feed(text string, calls []ToolCallDelta) []ToolCallDelta {
	if c.Failed || text == "" {
		return calls
	}
	c.out.calls = calls
	if !c.Obj.Done() {
		// The call is its own field sink: a pointer already on the heap,
		// so routing the fields costs no allocation per push.
		n, err := c.Obj.Feed(text, c)
		if err != nil {
			c.Failed = true
			return c.out.take()
		}
		text = text[n:]
	}
	if !isJSONSpace(text) {
		c.Failed = true
	}
	return c.out.take()
}

// end validates the finished call.
func (c *jsonCall) end(calls []ToolCallDelta) []ToolCallDelta {
	if c.Failed {
		return calls
	}
	if c.Obj.End() != nil || !c.HasArgs || !c.Named {
		c.Failed = true
	}
	return calls
}

// Field implements pyjson.FieldSink.
func (c *jsonCall) Field(key string) {
	switch key {
	case "name":
		c.NameCanon = c.NameCanon[:0]
	case c.argsKey():
		if c.HasArgs {
			// A repeated key: Python keeps the last value; this machine has
			// streamed the first and marks the call failed instead.
			c.Failed = true
		}
		c.HasArgs = true
	}
}

// FieldBytes implements pyjson.FieldSink.
func (c *jsonCall) FieldBytes(key string, canon []byte) {
	switch key {
	case "name":
		c.NameCanon = append(c.NameCanon, canon...)
	case c.argsKey():
		if c.Named {
			c.out.argsBytes(c.Index, canon)
		} else {
			c.Args = append(c.Args, canon...)
		}
	}
}

// FieldString implements pyjson.FieldStringSink: a streamed argument
// piece that is verbatim input goes out as a substring, uncopied.
func (c *jsonCall) FieldString(key string, canon string) {
	if key == c.argsKey() && c.Named {
		c.out.args(c.Index, canon)
		return
	}
	switch key {
	case "name":
		c.NameCanon = append(c.NameCanon, canon...)
	case c.argsKey():
		c.Args = append(c.Args, canon...)
	}
}

// FieldEnd implements pyjson.FieldSink.
func (c *jsonCall) FieldEnd(key string) {
	if key != "name" {
		return
	}
	name, ok := decodeString(c.NameCanon)
	if !ok || c.Named {
		c.Failed = true
		return
	}
	c.Named = true
	c.out.add(ToolCallDelta{Index: c.Index, ID: newToolCallID(), Type: "function", Name: name})
	if len(c.Args) > 0 {
		c.out.args(c.Index, string(c.Args))
		c.Args = nil
	}
}

func (h *Hermes) checkState() error { return phaseError(h.Phase, int(hermesFailed)+1) }
