package parsers

import (
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
	Index int
	Obj   pyjson.Object
	// Keys are the argument keys in order of preference (Python's
	// obj.get(keys[0], obj.get(keys[1], ...))).
	Keys []string
	// Default is the arguments when no key is present ("" fails).
	Default string
	// RawString passes a string value through undecoded-from-JSON, as
	// granite4's dump_args does, and fails on null.
	RawString bool

	NameCanon []byte
	Named     bool
	// Vals holds buffered canonical values per key rank; Has marks which
	// ranks were seen. Live is the rank streaming now (-1 if none) and
	// Streamed the rank that streamed.
	Vals     [][]byte
	Has      []bool
	Live     int
	Streamed int
	// Fresh is set until the live value's first bytes arrive.
	Fresh  bool
	Failed bool

	out []ToolCallDelta
}

func newCallObject(index int, keys []string, def string, rawString bool) callObject {
	return callObject{Index: index, Keys: keys, Default: def, RawString: rawString,
		Vals: make([][]byte, len(keys)), Has: make([]bool, len(keys)), Live: -1, Streamed: -1}
}

func (c *callObject) rank(key string) int {
	for i, k := range c.Keys {
		if k == key {
			return i
		}
	}
	return -1
}

// feed consumes text up to the object's closing brace and returns how
// many bytes it used, appending deltas to calls.
func (c *callObject) feed(text string, calls []ToolCallDelta) (int, []ToolCallDelta) {
	if c.Failed || c.Obj.Done() {
		return 0, calls
	}
	c.out = calls
	n, err := c.Obj.Feed(text, c)
	if err != nil {
		c.Failed = true
	}
	calls, c.out = c.out, nil
	return n, calls
}

// done reports whether the closing brace has been read.
func (c *callObject) done() bool { return c.Obj.Done() }

// end validates the complete object and sends what is still unsent.
func (c *callObject) end(calls []ToolCallDelta) []ToolCallDelta {
	if c.Failed || !c.Obj.Done() || !c.Named {
		c.Failed = true
		return calls
	}
	best := -1
	for i, h := range c.Has {
		if h {
			best = i
			break
		}
	}
	if c.Streamed >= 0 {
		if best != c.Streamed {
			c.Failed = true
		}
		return calls
	}
	var args string
	switch {
	case best >= 0:
		val := c.Vals[best]
		if c.RawString && len(val) > 0 && val[0] == '"' {
			s, ok := decodeString(val)
			if !ok {
				c.Failed = true
				return calls
			}
			args = s
		} else if c.RawString && string(val) == "null" {
			c.Failed = true
			return calls
		} else {
			args = string(val)
		}
	case c.Default != "":
		args = c.Default
	default:
		c.Failed = true
		return calls
	}
	return appendArgs(calls, c.Index, args)
}

// Field implements pyjson.FieldSink.
func (c *callObject) Field(key string) {
	if key == "name" {
		if c.Named {
			c.Failed = true
		}
		c.NameCanon = c.NameCanon[:0]
		return
	}
	r := c.rank(key)
	if r < 0 {
		return
	}
	if c.Has[r] && c.Streamed == r {
		c.Failed = true
	}
	c.Has[r] = true
	c.Vals[r] = c.Vals[r][:0]
	if r == 0 && c.Named && c.Streamed < 0 {
		c.Live, c.Streamed, c.Fresh = 0, 0, true
	}
}

// FieldBytes implements pyjson.FieldSink.
func (c *callObject) FieldBytes(key string, canon []byte) {
	if key == "name" {
		c.NameCanon = append(c.NameCanon, canon...)
		return
	}
	r := c.rank(key)
	if r < 0 {
		return
	}
	if r == c.Live {
		if c.Fresh && c.RawString {
			// A string or null is not re-serialised: buffer it for end.
			if canon[0] == '"' || string(canon) == "null" {
				c.Live, c.Streamed = -1, -1
				c.Vals[r] = append(c.Vals[r], canon...)
				return
			}
		}
		c.Fresh = false
		c.out = appendArgs(c.out, c.Index, string(canon))
		return
	}
	c.Vals[r] = append(c.Vals[r], canon...)
}

// FieldEnd implements pyjson.FieldSink.
func (c *callObject) FieldEnd(key string) {
	c.Live = -1
	if key != "name" || c.Failed {
		return
	}
	name, ok := decodeString(c.NameCanon)
	if !ok {
		c.Failed = true
		return
	}
	c.Named = true
	c.out = append(c.out, ToolCallDelta{Index: c.Index, ID: newToolCallID(), Type: "function", Name: name})
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
	State    callListState
	AnyValue bool
	Base     int
	Keys     []string
	Cur      callObject
	// Count is the number of complete elements.
	Count int
	// Default is the elements' arguments when they have none ("" fails).
	Default string
	// IsOther is set when the value is not a list.
	IsOther bool
	Other   pyjson.Value
	Canon   []byte
	Failed  bool
}

func newCallList(base int, keys []string, anyValue bool) callList {
	return callList{Base: base, Keys: keys, AnyValue: anyValue}
}

// feed consumes text up to the end of the value and returns how many
// bytes it used.
func (l *callList) feed(text string, calls []ToolCallDelta) (int, []ToolCallDelta) {
	i := 0
	for i < len(text) && !l.Failed && l.State != clDone {
		switch l.State {
		case clObj:
			n, out := l.Cur.feed(text[i:], calls)
			calls = out
			i += n
			if l.Cur.Failed {
				l.Failed = true
				break
			}
			if l.Cur.done() {
				if calls = l.Cur.end(calls); l.Cur.Failed {
					l.Failed = true
					break
				}
				l.Count++
				l.State = clAfter
			}
		case clOther:
			var n int
			var err error
			l.Canon, n, err = l.Other.Feed(l.Canon, text[i:])
			i += n
			if err != nil {
				l.Failed = true
			} else if l.Other.Done() {
				l.State = clDone
			}
		default:
			c := text[i]
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				i++
				continue
			}
			switch {
			case l.State == clOpen && c == '[':
				l.State = clFirst
			case l.State == clOpen && l.AnyValue:
				l.State, l.IsOther = clOther, true
				continue
			case (l.State == clFirst || l.State == clNext) && c == '{':
				l.Cur = newCallObject(l.Base+l.Count, l.Keys, l.Default, false)
				l.State = clObj
				continue
			case (l.State == clFirst || l.State == clAfter) && c == ']':
				l.State = clDone
			case l.State == clAfter && c == ',':
				l.State = clNext
			default:
				l.Failed = true
			}
			i++
		}
	}
	return i, calls
}

// end tells the list its input has ended.
func (l *callList) end() {
	if l.Failed {
		return
	}
	if l.State == clOther {
		var err error
		if l.Canon, err = l.Other.End(l.Canon); err == nil {
			l.State = clDone
		}
	}
	if l.State != clDone || l.IsOther && string(l.Canon) != "{}" && string(l.Canon) != `""` {
		l.Failed = true
	}
}
