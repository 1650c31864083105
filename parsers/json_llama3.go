package parsers

import (
	"github.com/vrender/vrender/internal/statecodec"
	"strings"

	"github.com/vrender/vrender/parsers/pyjson"
)

// Llama 3 JSON tool calls, as vLLM's Llama3JsonToolParser.extract_tool_calls:
// every "{" outside an already parsed object starts a JSON object (raw_decode)
// that must carry a string "name" and "arguments" (or, without it,
// "parameters"); the arguments are re-serialised with json.dumps. Text
// around and between objects ("<|python_tag|>", "; " separators, prose) is
// ignored. A "{" right after an object's closing brace is skipped, as
// vLLM's start_index <= end_index test does. If any object fails, vLLM
// returns no calls and the whole output as content; with calls, content is
// null. So content is held until the output ends or an object fails.
// Calls stream optimistically (name once complete, arguments as they
// arrive when the name came first) and are withdrawn by Called() == false
// on a later failure, as the hermes machine does.
//
// Known deviation: when the name came first and an object then repeats
// "name" or its arguments key, or gives "arguments" after streamed
// "parameters", the streamed call keeps the first values (Python keeps
// the last, and prefers "arguments").

// llama3JSON is the llama3_json tool machine.
type llama3JSON struct {
	failed bool
	// raw is the output so far: the content if no call survives.
	raw []byte
	// rawDropped is set once a streamed call went out: the client has it,
	// so the fallback to the whole output can no longer be reached, and
	// raw stops growing (a checkpoint stays flat inside long calls).
	rawDropped bool
	inObj      bool
	// skipBrace is set right after an object: a "{" there is text.
	skipBrace bool
	obj       pyjson.Object
	cur       llamaCall
	// Calls counts complete, valid objects.
	nCalls int

	calls []ToolCallDelta

	streaming bool // set by SetStreaming; configuration, not state
}

// llamaStreamHold is how much text a stream holds before its first call:
// vLLM returns the text only if no call follows, and null content if one
// does, which is known only at the end. Past it the text goes out as
// content and the output is read as vLLM's own stream reads one that
// does not open with a call: as text (docs/compatibility.md).
const llamaStreamHold = 512

// llamaCall is what one object has shown so far.
type llamaCall struct {
	index int
	// name, Arguments and Parameters are the canonical values of the last
	// occurrence of each key; the Has* counters count occurrences.
	name, arguments, parameters []byte
	hasName, hasArguments       int
	hasParameters               int
	// val collects the current field's canonical bytes.
	val []byte
	// header is set once id and name went out (Sent is that name); Live
	// is set while the arguments field streams, LiveKey once it did.
	header  bool
	sent    string
	live    bool
	liveKey string
}

func newLlama3JSON(Vocab, *Request) (toolMachine, error) { return &llama3JSON{}, nil }

// setStreaming implements streamingMachine.
func (l *llama3JSON) setStreaming() { l.streaming = true }

// Push implements toolMachine.
func (l *llama3JSON) Push(text string) (string, []ToolCallDelta) {
	if l.failed {
		if l.rawDropped {
			return "", nil // a streamed call failed: vLLM's stream adds nothing
		}
		return text, nil
	}
	if !l.rawDropped {
		l.raw = append(l.raw, text...)
	}
	for text != "" {
		if l.inObj {
			n, err := l.obj.Feed(text, l)
			text = text[n:]
			if err != nil {
				return l.fail()
			}
			if l.obj.Done() {
				if !l.endObject() {
					return l.fail()
				}
				l.inObj, l.skipBrace = false, true
			}
			continue
		}
		if l.skipBrace {
			l.skipBrace = false
			if text[0] == '{' {
				text = text[1:]
				continue
			}
		}
		i := strings.IndexByte(text, '{')
		if i < 0 {
			break
		}
		text = text[i:]
		l.inObj = true
		l.obj = pyjson.Object{}
		l.cur = llamaCall{index: l.nCalls}
	}
	if l.streaming && !l.rawDropped {
		switch {
		case l.cur.header || l.nCalls > 0:
			l.raw, l.rawDropped = nil, true
		case !l.inObj && len(l.raw) > llamaStreamHold:
			return l.fail()
		}
	}
	return "", l.take()
}

// Finish implements toolMachine.
func (l *llama3JSON) Finish() (string, []ToolCallDelta) {
	switch {
	case l.failed:
		return "", nil
	case l.inObj:
		return l.fail()
	case l.nCalls == 0:
		out := string(l.raw)
		l.raw = nil
		return out, l.take()
	}
	l.raw = nil
	return "", l.take()
}

// Called implements toolMachine.
func (l *llama3JSON) Called() bool { return !l.failed && l.nCalls > 0 }

func (l *llama3JSON) fail() (string, []ToolCallDelta) {
	l.failed = true
	out := string(l.raw)
	l.raw = nil
	return out, l.take()
}

func (l *llama3JSON) take() []ToolCallDelta {
	c := l.calls
	l.calls = nil
	return c
}

func isArgsKey(key string) bool { return key == "arguments" || key == "parameters" }

// Field implements pyjson.FieldSink.
func (l *llama3JSON) Field(key string) {
	c := &l.cur
	c.val = c.val[:0]
	if isArgsKey(key) && c.header && c.liveKey == "" && c.hasArguments+c.hasParameters == 0 {
		c.live, c.liveKey = true, key
	}
}

// FieldBytes implements pyjson.FieldSink.
func (l *llama3JSON) FieldBytes(key string, canon []byte) {
	c := &l.cur
	if key != "name" && !isArgsKey(key) {
		return
	}
	if c.live {
		// Streamed arguments are never sent again (endObject skips a
		// live call's), so they are not kept.
		l.emitArgs(string(canon))
		return
	}
	c.val = append(c.val, canon...)
}

// FieldEnd implements pyjson.FieldSink.
func (l *llama3JSON) FieldEnd(key string) {
	c := &l.cur
	c.live = false
	val := append([]byte(nil), c.val...)
	switch key {
	case "name":
		c.name = val
		c.hasName++
		if name, ok := decodeString(val); ok && !c.header {
			c.header, c.sent = true, name
			l.calls = append(l.calls, ToolCallDelta{Index: c.index, ID: newToolCallID(), Type: "function", Name: name})
		}
	case "arguments":
		c.arguments = val
		c.hasArguments++
	case "parameters":
		c.parameters = val
		c.hasParameters++
	}
}

// endObject validates a complete object and sends what is left of it.
func (l *llama3JSON) endObject() bool {
	c := &l.cur
	name, ok := decodeString(c.name)
	if c.hasName == 0 || !ok || c.hasArguments+c.hasParameters == 0 {
		return false
	}
	args := c.parameters
	if c.hasArguments > 0 {
		args = c.arguments
	}
	l.nCalls++
	if !c.header {
		l.calls = append(l.calls, ToolCallDelta{Index: c.index, ID: newToolCallID(), Type: "function", Name: name, Arguments: string(args)})
		return true
	}
	if c.liveKey == "" && name == c.sent {
		l.emitArgs(string(args))
	}
	return true
}

func (l *llama3JSON) emitArgs(frag string) {
	l.calls = appendArgs(l.calls, l.cur.index, frag)
}

// codec saves and restores the state of a llama3JSON.
func (l *llama3JSON) codec(c *statecodec.Codec) {
	c.Bool(&l.failed)
	c.ByteSlice(&l.raw)
	c.Bool(&l.rawDropped)
	c.Bool(&l.inObj)
	c.Bool(&l.skipBrace)
	l.obj.Codec(c)
	l.cur.codec(c)
	c.Int(&l.nCalls)
}

// codec saves and restores the state of a llamaCall.
func (l *llamaCall) codec(c *statecodec.Codec) {
	c.Int(&l.index)
	c.ByteSlice(&l.name)
	c.ByteSlice(&l.arguments)
	c.ByteSlice(&l.parameters)
	c.Int(&l.hasName)
	c.Int(&l.hasArguments)
	c.Int(&l.hasParameters)
	c.ByteSlice(&l.val)
	c.Bool(&l.header)
	c.String(&l.sent)
	c.Bool(&l.live)
	c.String(&l.liveKey)
}
