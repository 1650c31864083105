package parsers

import (
	"github.com/vrender/vrender/internal/statecodec"
	"github.com/vrender/vrender/parsers/pyjson"
)

// callObject reads one {"name": ..., <arguments key>: ...} JSON object for
// the JSON-list families (granite, granite4, jamba, internlm): the name
// goes out as soon as its value is complete, the arguments stream
// re-serialised while they arrive when the name came first and the key is
// the preferred one, and are sent whole at the end otherwise.
//
// Known deviation, shared with hermes: a repeated "name" or a repeated
// streamed arguments key fails the call (Python keeps the last value).
type callObject struct {
	index int
	obj   pyjson.Object
	// keys are the argument keys in order of preference (Python's
	// obj.get(keys[0], obj.get(keys[1], ...))).
	keys []string
	// Default is the arguments when no key is present ("" fails).
	defaultArgs string
	// rawString passes a string value through undecoded-from-JSON, as
	// granite4's dump_args does, and fails on null.
	rawString bool

	nameCanon []byte
	named     bool
	// vals holds buffered canonical values per key rank; Has marks which
	// ranks were seen. Live is the rank streaming now (-1 if none) and
	// Streamed the rank that streamed.
	vals     [][]byte
	has      []bool
	live     int
	streamed int
	// fresh is set until the live value's first bytes arrive.
	fresh  bool
	failed bool

	out []ToolCallDelta
}

func newCallObject(index int, keys []string, def string, rawString bool) callObject {
	return callObject{index: index, keys: keys, defaultArgs: def, rawString: rawString,
		vals: make([][]byte, len(keys)), has: make([]bool, len(keys)), live: -1, streamed: -1}
}

func (c *callObject) rank(key string) int {
	for i, k := range c.keys {
		if k == key {
			return i
		}
	}
	return -1
}

// feed consumes text up to the object's closing brace and returns how
// many bytes it used, appending deltas to calls.
func (c *callObject) feed(text string, calls []ToolCallDelta) (int, []ToolCallDelta) {
	if c.failed || c.obj.Done() {
		return 0, calls
	}
	c.out = calls
	n, err := c.obj.Feed(text, c)
	if err != nil {
		c.failed = true
	}
	calls, c.out = c.out, nil
	return n, calls
}

// done reports whether the closing brace has been read.
func (c *callObject) done() bool { return c.obj.Done() }

// end validates the complete object and sends what is still unsent.
func (c *callObject) end(calls []ToolCallDelta) []ToolCallDelta {
	if c.failed || !c.obj.Done() || !c.named {
		c.failed = true
		return calls
	}
	best := -1
	for i, h := range c.has {
		if h {
			best = i
			break
		}
	}
	if c.streamed >= 0 {
		if best != c.streamed {
			c.failed = true
		}
		return calls
	}
	var args string
	switch {
	case best >= 0:
		val := c.vals[best]
		if c.rawString && len(val) > 0 && val[0] == '"' {
			s, ok := decodeString(val)
			if !ok {
				c.failed = true
				return calls
			}
			args = s
		} else if c.rawString && string(val) == "null" {
			c.failed = true
			return calls
		} else {
			args = string(val)
		}
	case c.defaultArgs != "":
		args = c.defaultArgs
	default:
		c.failed = true
		return calls
	}
	return appendArgs(calls, c.index, args)
}

// Field implements pyjson.FieldSink.
func (c *callObject) Field(key string) {
	if key == "name" {
		if c.named {
			c.failed = true
		}
		c.nameCanon = c.nameCanon[:0]
		return
	}
	r := c.rank(key)
	if r < 0 {
		return
	}
	if c.has[r] && c.streamed == r {
		c.failed = true
	}
	c.has[r] = true
	c.vals[r] = c.vals[r][:0]
	if r == 0 && c.named && c.streamed < 0 {
		c.live, c.streamed, c.fresh = 0, 0, true
	}
}

// FieldBytes implements pyjson.FieldSink.
func (c *callObject) FieldBytes(key string, canon []byte) {
	if key == "name" {
		c.nameCanon = append(c.nameCanon, canon...)
		return
	}
	r := c.rank(key)
	if r < 0 {
		return
	}
	if r == c.live {
		if c.fresh && c.rawString {
			// A string or null is not re-serialised: buffer it for end.
			if canon[0] == '"' || string(canon) == "null" {
				c.live, c.streamed = -1, -1
				c.vals[r] = append(c.vals[r], canon...)
				return
			}
		}
		c.fresh = false
		c.out = appendArgs(c.out, c.index, string(canon))
		return
	}
	c.vals[r] = append(c.vals[r], canon...)
}

// FieldEnd implements pyjson.FieldSink.
func (c *callObject) FieldEnd(key string) {
	c.live = -1
	if key != "name" || c.failed {
		return
	}
	name, ok := decodeString(c.nameCanon)
	if !ok {
		c.failed = true
		return
	}
	c.named = true
	c.out = append(c.out, ToolCallDelta{Index: c.index, ID: newToolCallID(), Type: "function", Name: name})
}

// appendArgs adds an arguments fragment for call idx, merging it into the
// last delta when that one is for the same call.
func appendArgs(calls []ToolCallDelta, idx int, frag string) []ToolCallDelta {
	if frag == "" {
		return calls
	}
	if n := len(calls); n > 0 && calls[n-1].Index == idx {
		calls[n-1].Arguments += frag
		return calls
	}
	return append(calls, ToolCallDelta{Index: idx, Arguments: frag})
}

// callListState is where a callList is.
type callListState uint8

const (
	clOpen  callListState = iota // before the value
	clFirst                      // after '[': '{' or ']'
	clObj                        // inside an element
	clAfter                      // after an element: ',' or ']'
	clNext                       // after ',': '{'
	clOther                      // a top-level value that is not a list
	clDone                       // after the value
)

// callList reads a JSON list of call objects, as the Python loops
// `for call in json.loads(text)` with call["name"] and call["arguments"]
// see it: any element that is not a call object fails the whole list.
// With AnyValue, a top-level value other than a list is read too, and an
// empty object or string (which Python iterates zero times) gives no calls.
type callList struct {
	state    callListState
	anyValue bool
	base     int
	keys     []string
	cur      callObject
	// count is the number of complete elements.
	count int
	// Default is the elements' arguments when they have none ("" fails).
	defaultArgs string
	// isOther is set when the value is not a list.
	isOther bool
	other   pyjson.Value
	canon   []byte
	failed  bool
}

func newCallList(base int, keys []string, anyValue bool) callList {
	return callList{base: base, keys: keys, anyValue: anyValue}
}

// feed consumes text up to the end of the value and returns how many
// bytes it used.
func (l *callList) feed(text string, calls []ToolCallDelta) (int, []ToolCallDelta) {
	i := 0
	for i < len(text) && !l.failed && l.state != clDone {
		switch l.state {
		case clObj:
			n, out := l.cur.feed(text[i:], calls)
			calls = out
			i += n
			if l.cur.failed {
				l.failed = true
				break
			}
			if l.cur.done() {
				if calls = l.cur.end(calls); l.cur.failed {
					l.failed = true
					break
				}
				l.count++
				l.state = clAfter
			}
		case clOther:
			var n int
			var err error
			l.canon, n, err = l.other.Feed(l.canon, text[i:])
			i += n
			if err != nil {
				l.failed = true
			} else if l.other.Done() {
				l.state = clDone
			}
		default:
			c := text[i]
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				i++
				continue
			}
			switch {
			case l.state == clOpen && c == '[':
				l.state = clFirst
			case l.state == clOpen && l.anyValue:
				l.state, l.isOther = clOther, true
				continue
			case (l.state == clFirst || l.state == clNext) && c == '{':
				l.cur = newCallObject(l.base+l.count, l.keys, l.defaultArgs, false)
				l.state = clObj
				continue
			case (l.state == clFirst || l.state == clAfter) && c == ']':
				l.state = clDone
			case l.state == clAfter && c == ',':
				l.state = clNext
			default:
				l.failed = true
			}
			i++
		}
	}
	return i, calls
}

// end tells the list its input has ended.
func (l *callList) end() {
	if l.failed {
		return
	}
	if l.state == clOther {
		var err error
		if l.canon, err = l.other.End(l.canon); err == nil {
			l.state = clDone
		}
	}
	if l.state != clDone || l.isOther && string(l.canon) != "{}" && string(l.canon) != `""` {
		l.failed = true
	}
}

// codec saves and restores the state of a callList.
func (l *callList) codec(c *statecodec.Codec) {
	statecodec.Enum(c, &l.state, 7)
	c.Bool(&l.anyValue)
	c.Int(&l.base)
	statecodec.Strings(c, &l.keys)
	l.cur.codec(c)
	c.Int(&l.count)
	c.String(&l.defaultArgs)
	c.Bool(&l.isOther)
	l.other.Codec(c)
	c.ByteSlice(&l.canon)
	c.Bool(&l.failed)
}

// codec saves and restores the state of a callObject.
func (c *callObject) codec(sc *statecodec.Codec) {
	sc.Int(&c.index)
	c.obj.Codec(sc)
	statecodec.Strings(sc, &c.keys)
	sc.String(&c.defaultArgs)
	sc.Bool(&c.rawString)
	sc.ByteSlice(&c.nameCanon)
	sc.Bool(&c.named)
	statecodec.Slice(sc, &c.vals, (*statecodec.Codec).ByteSlice)
	statecodec.Slice(sc, &c.has, (*statecodec.Codec).Bool)
	sc.Int(&c.live)
	sc.Int(&c.streamed)
	sc.Bool(&c.fresh)
	sc.Bool(&c.failed)
	if sc.Decoding() && (len(c.vals) != len(c.keys) || len(c.has) != len(c.keys)) {
		sc.Failf("call object state has %d values for %d keys", len(c.vals), len(c.keys))
	}
}
