package parsers

import (
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

func init() {
	registerTool("llama3_json", ToolInfo{New: newLlama3JSON, SupportsRequiredAndNamed: true, StructuralTagModel: "llama"})
}

// Llama3JSON is the llama3_json tool machine.
type Llama3JSON struct {
	Failed bool
	// Raw is the output so far: the content if no call survives.
	Raw   []byte
	InObj bool
	// SkipBrace is set right after an object: a "{" there is text.
	SkipBrace bool
	Obj       pyjson.Object
	Cur       llamaCall
	// Calls counts complete, valid objects.
	Calls int

	calls []ToolCallDelta
}

// llamaCall is what one object has shown so far.
type llamaCall struct {
	Index int
	// Name, Arguments and Parameters are the canonical values of the last
	// occurrence of each key; the Has* counters count occurrences.
	Name, Arguments, Parameters []byte
	HasName, HasArguments       int
	HasParameters               int
	// Val collects the current field's canonical bytes.
	Val []byte
	// Header is set once id and name went out (Sent is that name); Live
	// is set while the arguments field streams, LiveKey once it did.
	Header  bool
	Sent    string
	Live    bool
	LiveKey string
}

func newLlama3JSON(Vocab, *Request) (ToolMachine, error) { return &Llama3JSON{}, nil }

// Push implements ToolMachine.
func (l *Llama3JSON) Push(text string) (string, []ToolCallDelta) {
	if l.Failed {
		return text, nil
	}
	l.Raw = append(l.Raw, text...)
	for text != "" {
		if l.InObj {
			n, err := l.Obj.Feed(text, l)
			text = text[n:]
			if err != nil {
				return l.fail()
			}
			if l.Obj.Done() {
				if !l.endObject() {
					return l.fail()
				}
				l.InObj, l.SkipBrace = false, true
			}
			continue
		}
		if l.SkipBrace {
			l.SkipBrace = false
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
		l.InObj = true
		l.Obj = pyjson.Object{}
		l.Cur = llamaCall{Index: l.Calls}
	}
	return "", l.take()
}

// Finish implements ToolMachine.
func (l *Llama3JSON) Finish() (string, []ToolCallDelta) {
	switch {
	case l.Failed:
		return "", nil
	case l.InObj:
		return l.fail()
	case l.Calls == 0:
		out := string(l.Raw)
		l.Raw = nil
		return out, l.take()
	}
	l.Raw = nil
	return "", l.take()
}

// Called implements ToolMachine.
func (l *Llama3JSON) Called() bool { return !l.Failed && l.Calls > 0 }

func (l *Llama3JSON) fail() (string, []ToolCallDelta) {
	l.Failed = true
	out := string(l.Raw)
	l.Raw = nil
	return out, l.take()
}

func (l *Llama3JSON) take() []ToolCallDelta {
	c := l.calls
	l.calls = nil
	return c
}

func isArgsKey(key string) bool { return key == "arguments" || key == "parameters" }

// Field implements pyjson.FieldSink.
func (l *Llama3JSON) Field(key string) {
	c := &l.Cur
	c.Val = c.Val[:0]
	if isArgsKey(key) && c.Header && c.LiveKey == "" && c.HasArguments+c.HasParameters == 0 {
		c.Live, c.LiveKey = true, key
	}
}

// FieldBytes implements pyjson.FieldSink.
func (l *Llama3JSON) FieldBytes(key string, canon []byte) {
	c := &l.Cur
	if key != "name" && !isArgsKey(key) {
		return
	}
	c.Val = append(c.Val, canon...)
	if c.Live {
		l.emitArgs(string(canon))
	}
}

// FieldEnd implements pyjson.FieldSink.
func (l *Llama3JSON) FieldEnd(key string) {
	c := &l.Cur
	c.Live = false
	val := append([]byte(nil), c.Val...)
	switch key {
	case "name":
		c.Name = val
		c.HasName++
		if name, ok := decodeString(val); ok && !c.Header {
			c.Header, c.Sent = true, name
			l.calls = append(l.calls, ToolCallDelta{Index: c.Index, ID: newToolCallID(), Type: "function", Name: name})
		}
	case "arguments":
		c.Arguments = val
		c.HasArguments++
	case "parameters":
		c.Parameters = val
		c.HasParameters++
	}
}

// endObject validates a complete object and sends what is left of it.
func (l *Llama3JSON) endObject() bool {
	c := &l.Cur
	name, ok := decodeString(c.Name)
	if c.HasName == 0 || !ok || c.HasArguments+c.HasParameters == 0 {
		return false
	}
	args := c.Parameters
	if c.HasArguments > 0 {
		args = c.Arguments
	}
	l.Calls++
	if !c.Header {
		l.calls = append(l.calls, ToolCallDelta{Index: c.Index, ID: newToolCallID(), Type: "function", Name: name, Arguments: string(args)})
		return true
	}
	if c.LiveKey == "" && name == c.Sent {
		l.emitArgs(string(args))
	}
	return true
}

func (l *Llama3JSON) emitArgs(frag string) {
	l.calls = appendArgs(l.calls, l.Cur.Index, frag)
}
