package pyjson

import (
	"encoding/json"

	"github.com/vrender/vrender/internal/statecodec"
)

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
	state objState
	// keyCanon is the canonical JSON text of the current key.
	keyCanon []byte
	// curKey is the decoded current key.
	curKey string
	// val reads the current key or value.
	val Value

	// buf is scratch for a value's canonical bytes, reused across calls
	// (the sink copies what it keeps); not state.
	buf []byte
}

// Done reports whether the closing brace has been read.
func (o *Object) Done() bool { return o.state == obDone }

// Feed consumes src until the object closes and returns how many bytes it
// consumed; bytes after the closing brace are left for the caller.
func (o *Object) Feed(src string, sink FieldSink) (int, error) {
	strSink, _ := sink.(FieldStringSink)
	i := 0
	for i < len(src) {
		c := src[i]
		switch o.state {
		case obDone:
			return i, nil
		case obOpen, obKeyFirst, obKey, obColon, obAfter:
			if isSpace(c) {
				i++
				continue
			}
			switch {
			case o.state == obOpen && c == '{':
				o.state = obKeyFirst
			case (o.state == obKeyFirst || o.state == obKey) && c == '"':
				o.state = obKeyText
				o.val = Value{}
				o.keyCanon = o.keyCanon[:0]
				var err error
				o.keyCanon, _, err = o.val.Feed(o.keyCanon, `"`)
				if err != nil {
					return i, err
				}
			case (o.state == obKeyFirst || o.state == obAfter) && c == '}':
				o.state = obDone
			case o.state == obAfter && c == ',':
				o.state = obKey
			case o.state == obColon && c == ':':
				o.state = obValue
				o.val = Value{}
				sink.Field(o.curKey)
			default:
				return i, syntaxErr("unexpected %q in object", c)
			}
			i++
		case obKeyText:
			var n int
			var err error
			o.keyCanon, n, err = o.val.Feed(o.keyCanon, src[i:])
			i += n
			if err != nil {
				return i, err
			}
			if o.val.Done() {
				if err := json.Unmarshal(o.keyCanon, &o.curKey); err != nil {
					return i, syntaxErr("key %s: %v", o.keyCanon, err)
				}
				o.state = obColon
			}
		case obValue:
			if strSink != nil {
				if n := o.val.plainRun(src[i:]); n > 0 {
					strSink.FieldString(o.curKey, src[i:i+n])
					i += n
					continue
				}
			}
			out, n, err := o.val.Feed(o.buf[:0], src[i:])
			o.buf = out[:0]
			i += n
			if len(out) > 0 {
				sink.FieldBytes(o.curKey, out)
			}
			if err != nil {
				return i, err
			}
			if o.val.Done() {
				sink.FieldEnd(o.curKey)
				o.state = obAfter
			}
		}
	}
	return i, nil
}

// End tells the machine its input has ended; an unclosed object is an error.
func (o *Object) End() error {
	if o.state != obDone {
		return syntaxErr("unexpected end of object")
	}
	return nil
}

// Key is the decoded key of the field being read.
func (o *Object) Key() string { return o.curKey }

// Codec saves or restores the machine's state (a checkpoint).
func (o *Object) Codec(c *statecodec.Codec) {
	statecodec.Enum(c, &o.state, int(obDone)+1)
	c.ByteSlice(&o.keyCanon)
	c.String(&o.curKey)
	o.val.Codec(c)
}
