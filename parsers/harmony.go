package parsers

import (
	"github.com/vrender/vrender/internal/statecodec"
	"strings"

	"github.com/vrender/vrender/parsers/pyjson"
)

// gpt-oss's Harmony output, as vLLM's HarmonyParser (vllm/parser/harmony.py)
// reads it through openai_harmony's StreamableParser started with role
// assistant. The markers are special tokens of o200k_harmony; with
// skip_special_tokens off they arrive in the text, so the machine reads
// them there like every family here (NeedsSpecialTokens). vLLM maps the
// parsed messages: analysis -> reasoning (with a reasoning parser),
// functions.X recipients -> tool calls (with a tool parser; arguments
// json.dumps(json.loads(...))'d when the content type is JSON or absent),
// final and recipient-less commentary (preambles) -> content, each kind's
// messages joined by "\n" in the non-streaming answer this machine follows.
//
// The tool parser "openai" is the full machine. The reasoning parser
// "openai_gptoss" is the same machine taking the analysis bodies; when an
// "openai" tool machine follows it (New sets pass), it hands the rest of
// the text on verbatim, analysis bodies blanked, for that machine to parse.

const (
	hmStart   = "<|start|>"
	hmMessage = "<|message|>"
	hmChannel = "<|channel|>"
	hmConstr  = "<|constrain|>"
)

// harmonyStops end a message (encoding.stop_tokens: <|end|>, <|call|>,
// <|return|>).
var harmonyStops = []string{"<|end|>", "<|call|>", "<|return|>"}

// The StreamableParser's states, plus the error vLLM answers with the raw
// output as content.
const (
	hsHeader = iota
	hsContent
	hsExpectStart
	hsError
)

// Harmony kinds of a message, vLLM's _SegmentType.
const (
	hkIgnore = iota
	hkReasoning
	hkContent
	hkTool
)

// harmony is the Harmony machine.
type harmony struct {
	state int
	// next is set while the first header is read: its role is given.
	next bool
	// pending is text not yet consumed: a possible marker's start, or the
	// header so far.
	pending []byte
	kind    int
	// args is a JSON tool call's body, canonicalized at its end.
	args        []byte
	argsJSON    bool
	calls       int
	reasonOut   bool
	contentOut  bool
	msgOut      bool
	initialized bool
	// A streaming machine re-serialises a JSON call's arguments as they
	// arrive (stream) instead of holding them (args): same is set while
	// what went out equals the raw text (so a body that turns out invalid
	// can still go out raw, as vLLM answers), lag is what one side has
	// that the other does not yet (the canonical side when ahead: its ": "
	// goes out before the raw space), bad is set once the body is known
	// to be invalid.
	stream           pyjson.Value
	same, bad, ahead bool
	lag              []byte
	reason, tools    bool
	pass             bool

	streaming bool // set by SetStreaming; configuration, not state
	// buf is scratch for a push's re-serialised bytes; not state.
	buf []byte
}

// setStreaming implements streamingMachine.
func (h *harmony) setStreaming() { h.streaming = true }

// Push implements reasoningMachine.
func (h *harmony) Push(text string) (reasoning, content string) {
	r, c, _ := h.push(text, false)
	return r, c
}

// Finish implements reasoningMachine.
func (h *harmony) Finish() (reasoning, content string) {
	r, c, _ := h.push("", true)
	return r, c
}

// Nulls implements reasoningMachine: vLLM returns None for empty parts.
func (h *harmony) Nulls() (reasoningNull, contentNull bool) { return true, true }

// harmonyTools is the "openai" tool machine: Harmony with its calls.
type harmonyTools struct{ harmony }

// Push implements toolMachine.
func (t *harmonyTools) Push(text string) (string, []ToolCallDelta) {
	_, c, calls := t.push(text, false)
	return c, calls
}

// Finish implements toolMachine.
func (t *harmonyTools) Finish() (string, []ToolCallDelta) {
	_, c, calls := t.push("", true)
	return c, calls
}

// Called implements toolMachine.
func (t *harmonyTools) Called() bool { return t.calls > 0 }

type harmonyOut struct {
	r, c  strings.Builder
	calls []ToolCallDelta
}

func (h *harmony) push(text string, final bool) (string, string, []ToolCallDelta) {
	if !h.initialized {
		h.initialized, h.next = true, true
	}
	var o harmonyOut
	if h.state == hsError {
		o.c.WriteString(text)
		return "", o.c.String(), nil
	}
	h.pending = append(h.pending, text...)
	h.scan(&o, final)
	if final {
		h.eos(&o)
	}
	return o.r.String(), o.c.String(), o.calls
}

// scan consumes Pending as far as it is certain.
func (h *harmony) scan(o *harmonyOut, final bool) {
	for len(h.pending) > 0 && h.state != hsError {
		buf := string(h.pending)
		switch h.state {
		case hsExpectStart:
			if strings.HasPrefix(buf, hmStart) {
				h.raw(o, hmStart)
				h.pending = h.pending[len(hmStart):]
				h.state = hsHeader
				continue
			}
			if !final && strings.HasPrefix(hmStart, buf) {
				return
			}
			h.fail(o)
			return
		case hsHeader:
			i := strings.Index(buf, hmMessage)
			j, stop := firstStop(buf)
			if i >= 0 && (j < 0 || i < j) {
				if !h.header(o, buf[:i]) {
					h.fail(o)
					return
				}
				h.raw(o, buf[:i+len(hmMessage)])
				h.pending = append(h.pending[:0:0], buf[i+len(hmMessage):]...)
				continue
			}
			if j >= 0 {
				if !h.malformed(o, buf[:j], buf[:j+len(stop)]) {
					h.fail(o)
					return
				}
				h.pending = append(h.pending[:0:0], buf[j+len(stop):]...)
				h.state, h.next = hsExpectStart, false
				continue
			}
			return // the header is not complete yet
		case hsContent:
			j, stop := firstStop(buf)
			if j < 0 {
				keep := 0
				if !final {
					keep = heldMarkerPrefix(buf)
				}
				h.body(o, buf[:len(buf)-keep])
				h.pending = append(h.pending[:0:0], buf[len(buf)-keep:]...)
				return
			}
			h.body(o, buf[:j])
			h.endMessage(o)
			h.raw(o, stop)
			h.pending = append(h.pending[:0:0], buf[j+len(stop):]...)
			h.state = hsExpectStart
		}
	}
}

// heldMarkerPrefix is how many trailing bytes of s may begin a stop marker.
func heldMarkerPrefix(s string) int {
	i := strings.LastIndexByte(s, '<')
	if i < 0 {
		return 0
	}
	for _, m := range harmonyStops {
		if strings.HasPrefix(m, s[i:]) {
			return len(s) - i
		}
	}
	return 0
}

func firstStop(s string) (int, string) {
	best, which := -1, ""
	for _, m := range harmonyStops {
		if i := strings.Index(s, m); i >= 0 && (best < 0 || i < best) {
			best, which = i, m
		}
	}
	return best, which
}

// raw passes header and marker text on to a following Harmony machine.
func (h *harmony) raw(o *harmonyOut, s string) {
	if h.pass {
		o.c.WriteString(s)
	}
}

// fail is openai_harmony raising: vLLM answers with the raw output as
// content. What was emitted stays; the rest goes out as content.
func (h *harmony) fail(o *harmonyOut) {
	h.state = hsError
	o.c.Write(h.pending)
	h.pending = nil
}

// eos is process_eos.
func (h *harmony) eos(o *harmonyOut) {
	switch h.state {
	case hsHeader:
		h.recover(o)
	case hsContent:
		h.endMessage(o)
		h.state = hsExpectStart
	}
}

// recover is HarmonyParser.flush on the error process_eos raises inside a
// header (vLLM bf578e1): the tokens of the unfinished message, from its
// <|start|> (the whole output for the first), decoded with special tokens
// become a final message; what was parsed before stays. In pass mode the
// raw text goes on and the following machine recovers it itself.
func (h *harmony) recover(o *harmonyOut) {
	text := string(h.pending)
	h.pending = nil
	if h.pass {
		o.c.WriteString(text)
		return
	}
	if !h.next {
		text = hmStart + text
	}
	h.kind, h.msgOut = hkContent, false
	h.body(o, text)
	h.endMessage(o)
	h.state = hsExpectStart
}

// parsedHeader is parse_header_from_string's answer.
type parsedHeader struct {
	role, recipient, channel, contentType string
	rest                                  []string
}

var harmonyRoles = map[string]bool{"user": true, "assistant": true, "system": true, "developer": true, "tool": true}

func (h *harmony) parseHeader(s string, recipients bool) (parsedHeader, bool) {
	var ph parsedHeader
	if i := strings.Index(s, hmChannel); i >= 0 {
		after := s[i+len(hmChannel):]
		end := strings.IndexFunc(after, func(c rune) bool { return c == '<' || isPyWhitespace(c) })
		if end < 0 {
			end = len(after)
		}
		if end == 0 {
			return ph, false
		}
		ph.channel = after[:end]
		s = s[:i] + after[end:]
	}
	s = strings.TrimFunc(s, isPyWhitespace)
	if strings.Contains(s, hmConstr) {
		s = strings.TrimFunc(strings.ReplaceAll(s, hmConstr, " "+hmConstr), isPyWhitespace)
	}
	parts := strings.Fields(s)
	if h.next {
		ph.role = "assistant"
	} else {
		if len(parts) == 0 {
			return ph, false
		}
		ph.role = parts[0]
		if !harmonyRoles[ph.role] {
			if len(parts) == 1 && !strings.HasPrefix(parts[0], "to=") {
				return ph, false
			}
			parts, ph.role = parts[1:], "tool"
		}
	}
	if len(parts) > 0 && parts[0] == ph.role {
		parts = parts[1:]
	}
	if recipients && len(parts) > 0 {
		n := len(parts)
		last := parts[n-1]
		parts = parts[:n-1]
		switch {
		case strings.HasPrefix(last, "to="):
			ph.recipient = last[3:]
		case n == 1:
			ph.recipient = last
		default:
			ph.contentType = last
			if len(parts) > 0 {
				r := parts[len(parts)-1]
				parts = parts[:len(parts)-1]
				ph.recipient = strings.TrimPrefix(r, "to=")
			}
		}
	}
	ph.rest = parts
	return ph, true
}

// isPyWhitespace approximates Rust's char::is_whitespace / ASCII split.
func isPyWhitespace(c rune) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// header parses a complete header and starts the message.
func (h *harmony) header(o *harmonyOut, s string) bool {
	ph, ok := h.parseHeader(s, true)
	if !ok || len(ph.rest) > 0 {
		return false
	}
	h.next = false
	h.state = hsContent
	h.start(o, ph)
	return true
}

// malformed is a stop marker inside a header: a role-given header becomes
// a message whose text is what remains of it. raw is the header with its
// stop marker, passed on once the header parsed.
func (h *harmony) malformed(o *harmonyOut, s, raw string) bool {
	if !h.next || s == "" {
		h.raw(o, raw)
		return true
	}
	ph, ok := h.parseHeader(s, false)
	if !ok {
		return false
	}
	h.raw(o, raw)
	h.start(o, ph)
	if rest := strings.Join(ph.rest, " "); !h.pass || h.kind == hkReasoning {
		// In pass mode the raw header already carried the text on.
		h.body(o, rest)
	}
	h.endMessage(o)
	return true
}

func (h *harmony) start(o *harmonyOut, ph parsedHeader) {
	recipient := ph.recipient
	if i := strings.Index(recipient, hmConstr); i >= 0 {
		recipient = strings.TrimRight(recipient[:i], " \t\n\r")
	}
	h.msgOut, h.args = false, nil
	h.stream, h.same, h.bad, h.ahead, h.lag = pyjson.Value{}, true, false, false, nil
	switch {
	case ph.role != "assistant":
		h.kind = hkIgnore
	case recipient != "" && isFunctionRecipient(recipient):
		h.kind = hkTool
	case ph.channel == "analysis":
		h.kind = hkReasoning
	case ph.channel == "final" || ph.channel == "commentary" && recipient == "":
		h.kind = hkContent
	default:
		h.kind = hkIgnore
	}
	if h.kind == hkTool && h.tools {
		h.argsJSON = ph.contentType == "" || strings.Contains(ph.contentType, "json")
		o.calls = append(o.calls, ToolCallDelta{Index: h.calls, ID: newToolCallID(), Type: "function",
			Name: strings.TrimPrefix(recipient, "functions.")})
		h.calls++
	}
}

// isFunctionRecipient is vLLM's is_function_recipient for chat.
func isFunctionRecipient(r string) bool {
	switch {
	case strings.HasPrefix(r, "<|"):
		return false
	case strings.HasPrefix(r, "functions."):
		return len(r) > len("functions.")
	case r == "assistant":
		return false
	}
	first, _, _ := strings.Cut(r, ".")
	return first != "python" && first != "browser" && first != "container" &&
		r != "code_interpreter" && r != "web_search_preview"
}

// body is message text.
func (h *harmony) body(o *harmonyOut, s string) {
	if s == "" {
		return
	}
	switch h.kind {
	case hkReasoning:
		if h.reason {
			if !h.msgOut && h.reasonOut {
				o.r.WriteByte('\n')
			}
			o.r.WriteString(s)
			h.msgOut, h.reasonOut = true, true
			return
		}
		if h.pass || h.tools {
			return // dropped; blanked for the following machine
		}
	case hkContent:
		if h.pass {
			o.c.WriteString(s)
			return
		}
		if !h.msgOut && h.contentOut {
			o.c.WriteByte('\n')
		}
		o.c.WriteString(s)
		h.msgOut, h.contentOut = true, true
		return
	case hkTool:
		if h.pass {
			o.c.WriteString(s)
			return
		}
		if !h.tools {
			return
		}
		if h.argsJSON && h.streaming {
			h.streamArgs(o, s)
			return
		}
		if h.argsJSON {
			h.args = append(h.args, s...)
			return
		}
		o.calls = append(o.calls, ToolCallDelta{Index: h.calls - 1, Arguments: s})
		return
	}
	if h.pass {
		o.c.WriteString(s)
	}
}

// endMessage closes a message: a JSON call's arguments as vLLM's
// json.dumps(json.loads(text)) gives them (the text itself when invalid).
func (h *harmony) endMessage(o *harmonyOut) {
	if h.kind == hkTool && h.tools && !h.pass && h.argsJSON && h.streaming && !h.bad {
		if out, err := h.stream.End(nil); err != nil {
			h.argsFail(o, "")
		} else {
			h.argsOut(o, out)
		}
	}
	h.stream, h.lag = pyjson.Value{}, nil
	if h.kind == hkTool && h.tools && !h.pass && h.argsJSON && len(h.args) > 0 {
		args := string(h.args)
		if c, err := pyjson.Canonical(args); err == nil {
			args = c
		}
		o.calls = append(o.calls, ToolCallDelta{Index: h.calls - 1, Arguments: args})
	}
	h.args, h.kind, h.msgOut = nil, hkIgnore, false
}

// streamArgs re-serialises a streamed JSON body as it arrives, sending
// the canonical bytes now certain: a valid body's arguments are then
// exactly json.dumps(json.loads(body)), as the held body gives them. An
// invalid one is answered raw; that is reached exactly while the body
// went out unchanged (same), and otherwise the stream keeps what it sent
// (docs/compatibility.md), as a hermes call failing after it streamed.
func (h *harmony) streamArgs(o *harmonyOut, s string) {
	for s != "" {
		if h.bad {
			h.rawOut(o, s)
			return
		}
		if h.stream.Done() {
			// Only whitespace may follow the value.
			i := 0
			for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
				i++
			}
			h.match(nil, s[:i])
			if i < len(s) {
				h.argsFail(o, s[i:])
			}
			return
		}
		out, n, err := h.stream.Feed(h.buf[:0], s)
		h.buf = out
		h.match(out, s[:n])
		h.argsOut(o, out)
		if err != nil {
			h.argsFail(o, s[n:])
			return
		}
		s = s[n:]
	}
}

// match notes that raw was read and canon went out for it: while one is
// a prefix of the other, lag keeps the longer one's rest.
func (h *harmony) match(canon []byte, raw string) {
	if !h.same || len(h.lag) == 0 && string(canon) == raw {
		return // most pushes of a body written as json.dumps writes it
	}
	long, short := append(h.lag, canon...), []byte(raw)
	if !h.ahead {
		long, short = append(h.lag, raw...), canon
	}
	if len(short) > len(long) {
		long, short = short, long
		h.ahead = !h.ahead
	}
	if string(long[:len(short)]) != string(short) {
		h.same, h.lag = false, nil
		return
	}
	h.lag = append(h.lag[:0], long[len(short):]...)
}

// argsFail settles on an invalid body: rest is raw text after what the
// re-serialiser took.
func (h *harmony) argsFail(o *harmonyOut, rest string) {
	h.bad = true
	h.rawOut(o, rest)
}

// rawOut sends raw text of an invalid body while what went out is still
// its prefix.
func (h *harmony) rawOut(o *harmonyOut, s string) {
	if !h.same {
		return
	}
	if !h.ahead {
		h.argsOut(o, append(h.lag, s...))
		h.lag = h.lag[:0]
		return
	}
	// Sent bytes the raw text has not reached yet: it must repeat them.
	n := min(len(s), len(h.lag))
	if s[:n] != string(h.lag[:n]) {
		h.same, h.lag = false, nil
		return
	}
	h.lag = append(h.lag[:0], h.lag[n:]...)
	if len(h.lag) == 0 {
		h.ahead = false
	}
	h.argsOut(o, []byte(s[n:]))
}

// argsOut sends argument bytes of the current call, in one fragment per
// push.
func (h *harmony) argsOut(o *harmonyOut, b []byte) {
	if len(b) == 0 {
		return
	}
	if n := len(o.calls); n > 0 && o.calls[n-1].Index == h.calls-1 && o.calls[n-1].Name == "" {
		o.calls[n-1].Arguments += string(b)
		return
	}
	o.calls = append(o.calls, ToolCallDelta{Index: h.calls - 1, Arguments: string(b)})
}

// codec saves and restores the state of a harmony.
func (h *harmony) codec(c *statecodec.Codec) {
	c.Range(&h.state, hsHeader, hsError)
	c.Bool(&h.next)
	c.ByteSlice(&h.pending)
	c.Range(&h.kind, hkIgnore, hkTool)
	c.ByteSlice(&h.args)
	c.Bool(&h.argsJSON)
	c.Int(&h.calls)
	c.Bool(&h.reasonOut)
	c.Bool(&h.contentOut)
	c.Bool(&h.msgOut)
	c.Bool(&h.initialized)
	h.stream.Codec(c)
	c.Bool(&h.same)
	c.Bool(&h.bad)
	c.Bool(&h.ahead)
	c.ByteSlice(&h.lag)
}

// codec saves and restores the state of a harmonyTools.
func (t *harmonyTools) codec(c *statecodec.Codec) {
	t.harmony.codec(c)
}

// newHarmonyReasoning is openai_gptoss's reasoning machine.
func newHarmonyReasoning(Vocab, *Request, []int) (reasoningMachine, error) {
	return &harmony{reason: true}, nil
}

// newHarmonyTools is the "openai" tool machine.
func newHarmonyTools(Vocab, *Request) (toolMachine, error) {
	return &harmonyTools{harmony{tools: true}}, nil
}
