package pyjson

import "encoding/json"

// FieldSink receives the fields of a top-level object as an Object machine
// reads them; it is passed to each Feed call so the machine's own state
// stays plain data.
type FieldSink interface {
	// Field starts the value of key (decoded).
	Field(key string)
	// FieldBytes carries canonical bytes of the current field's value.
	FieldBytes(key string, canon []byte)
	// FieldEnd ends the current field's value.
	FieldEnd(key string)
}

// FieldStringSink is a FieldSink that also takes canonical text as a
// string: a piece of Feed's input that re-serialises to itself, handed
// over without a copy. A sink without it gets the same text through
// FieldBytes.
type FieldStringSink interface {
	FieldString(key string, canon string)
}

// objState is where an Object machine is within its object.
type objState uint8

const (
	obOpen     objState = iota // before '{'
	obKeyFirst                 // after '{': a key or '}'
	obKey                      // after ',': a key
	obKeyText                  // inside a key
	obColon                    // after a key: ':'
	obValue                    // inside a field's value
	obAfter                    // after a value: ',' or '}'
	obDone                     // after '}'
)

// Object reads one top-level JSON object field by field, re-serialising
// each value through a Value machine so a caller can stream one field's
// canonical form while validating the others. A non-object is an error.
type Object struct {
	State objState
	// KeyCanon is the canonical JSON text of the current key.
	KeyCanon []byte
	// CurKey is the decoded current key.
	CurKey string
	// Val reads the current key or value.
	Val Value

	// buf is scratch for a value's canonical bytes, reused across calls
	// (the sink copies what it keeps); not state.
	buf []byte
}

// Done reports whether the closing brace has been read.
func (o *Object) Done() bool { return o.State == obDone }

// Feed consumes src until the object closes and returns how many bytes it
// consumed; bytes after the closing brace are left for the caller.
func (o *Object) Feed(src string, sink FieldSink) (int, error) {
	strSink, _ := sink.(FieldStringSink)
	i := 0
	for i < len(src) {
		c := src[i]
		switch o.State {
		case obDone:
			return i, nil
		case obOpen, obKeyFirst, obKey, obColon, obAfter:
			if isSpace(c) {
				i++
				continue
			}
			switch {
			case o.State == obOpen && c == '{':
				o.State = obKeyFirst
			case (o.State == obKeyFirst || o.State == obKey) && c == '"':
				o.State = obKeyText
				o.Val = Value{}
				o.KeyCanon = o.KeyCanon[:0]
				var err error
				o.KeyCanon, _, err = o.Val.Feed(o.KeyCanon, `"`)
				if err != nil {
					return i, err
				}
			case (o.State == obKeyFirst || o.State == obAfter) && c == '}':
				o.State = obDone
			case o.State == obAfter && c == ',':
				o.State = obKey
			case o.State == obColon && c == ':':
				o.State = obValue
				o.Val = Value{}
				sink.Field(o.CurKey)
			default:
				return i, syntaxErr("unexpected %q in object", c)
			}
			i++
		case obKeyText:
			var n int
			var err error
			o.KeyCanon, n, err = o.Val.Feed(o.KeyCanon, src[i:])
			i += n
			if err != nil {
				return i, err
			}
			if o.Val.Done() {
				if err := json.Unmarshal(o.KeyCanon, &o.CurKey); err != nil {
					return i, syntaxErr("key %s: %v", o.KeyCanon, err)
				}
				o.State = obColon
			}
		case obValue:
			if strSink != nil {
				if n := o.Val.plainRun(src[i:]); n > 0 {
					strSink.FieldString(o.CurKey, src[i:i+n])
					i += n
					continue
				}
			}
			out, n, err := o.Val.Feed(o.buf[:0], src[i:])
			o.buf = out[:0]
			i += n
			if len(out) > 0 {
				sink.FieldBytes(o.CurKey, out)
			}
			if err != nil {
				return i, err
			}
			if o.Val.Done() {
				sink.FieldEnd(o.CurKey)
				o.State = obAfter
			}
		}
	}
	return i, nil
}

// End tells the machine its input has ended; an unclosed object is an error.
func (o *Object) End() error {
	if o.State != obDone {
		return syntaxErr("unexpected end of object")
	}
	return nil
}
