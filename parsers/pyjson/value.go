// Package pyjson re-serialises JSON exactly as Python's
// json.dumps(json.loads(s), ensure_ascii=False) writes it: ", " and ": "
// separators, key order kept, Python float repr, arbitrary-precision
// integers, and Python's escapes. The Value machine does it incrementally,
// a byte at a time with an explicit stack (the shape of encoding/json's
// scanner), emitting canonical bytes as soon as they are certain.
package pyjson

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/vrender/vrender/internal/statecodec"
	"github.com/vrender/vrender/internal/wire"
)

// ErrSyntax is wrapped by every error for input Python's json.loads rejects.
var ErrSyntax = errors.New("pyjson: invalid JSON")

// state is where a Value machine is within its input.
type state uint8

const (
	stValue    state = iota // expecting a value
	stObjFirst              // after '{': a key or '}'
	stObjKey                // after ',' in an object: a key
	stColon                 // after a key: ':'
	stArrFirst              // after '[': a value or ']'
	stAfter                 // after a value inside a container
	stString                // inside a string
	stEscape                // after a backslash inside a string
	stNumber                // inside a number
	stLiteral               // inside true/false/null/NaN/Infinity/-Infinity
	stDone                  // the top-level value is complete
)

// Value is the incremental re-serialiser of exactly one JSON value. The
// zero Value is ready; its fields are exported so callers can checkpoint it.
type Value struct {
	state state
	// stack holds 'o' or 'a' per open container.
	stack []byte
	// key is set while the current string is an object key.
	key bool
	// pend is the text of an unfinished literal or escape.
	pend string
	// num is the text of an unfinished number. It grows in place:
	// appending each push to a string copied the number's text so far
	// every time, quadratic in a long number fed a few bytes at a time.
	// numOwner is the Value that may write into num's spare capacity; a
	// copy of a Value (numOwner is not itself) clones num before its first
	// append, so copies never write into bytes another copy can see.
	num      []byte
	numOwner *Value
	// high is a \u high surrogate waiting for its low half (0 if none).
	high rune
}

// appendNum adds s to the unfinished number's text.
func (v *Value) appendNum(s string) {
	if v.numOwner != v {
		v.num = append(make([]byte, 0, 2*len(v.num)+len(s)+8), v.num...)
		v.numOwner = v
	}
	v.num = append(v.num, s...)
}

// takeNum returns the finished number's text and clears it. The buffer
// stays for the next number.
func (v *Value) takeNum() string {
	s := string(v.num)
	v.num = v.num[:0]
	return s
}

// Done reports whether the top-level value is complete.
func (v *Value) Done() bool { return v.state == stDone }

// Depth is the number of open containers.
func (v *Value) Depth() int { return len(v.stack) }

func syntaxErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSyntax, fmt.Sprintf(format, args...))
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// Feed consumes src until the top-level value completes, appending the
// canonical bytes now certain to dst. It returns the extended dst and how
// many bytes of src it consumed; bytes after a complete value are left for
// the caller (a number is complete only once a byte after it is seen).
func (v *Value) Feed(dst []byte, src string) ([]byte, int, error) {
	for i := 0; i < len(src); {
		if v.state == stDone {
			return dst, i, nil
		}
		if n := v.plainRun(src[i:]); n > 0 {
			dst = append(dst, src[i:i+n]...)
			i += n
			continue
		}
		if n := v.numberRun(src[i:]); n > 0 {
			// One append per run, not per byte.
			v.appendNum(src[i : i+n])
			i += n
			continue
		}
		c := src[i]
		var consumed bool
		var err error
		dst, consumed, err = v.step(dst, c)
		if err != nil {
			return dst, i, err
		}
		if consumed {
			i++
		}
	}
	return dst, len(src), nil
}

// End tells the machine its input has ended: a pending top-level number is
// completed; anything else unfinished is an error.
func (v *Value) End(dst []byte) ([]byte, error) {
	if v.state == stNumber && len(v.stack) == 0 {
		out, err := appendNumber(dst, string(v.num))
		if err != nil {
			return dst, err
		}
		v.num = v.num[:0]
		v.state = stDone
		return out, nil
	}
	if v.state != stDone {
		return dst, syntaxErr("unexpected end of input")
	}
	return dst, nil
}

// afterValue moves to the state following a complete value.
func (v *Value) afterValue() {
	if len(v.stack) == 0 {
		v.state = stDone
	} else {
		v.state = stAfter
	}
}

// step handles one byte; consumed is false when the byte ends a number or
// literal and must be seen again in the next state.
func (v *Value) step(dst []byte, c byte) ([]byte, bool, error) {
	switch v.state {
	case stValue:
		return v.startValue(dst, c)
	case stObjFirst, stObjKey:
		switch {
		case isSpace(c):
		case c == '"':
			v.key = true
			v.state = stString
			dst = append(dst, '"')
		case c == '}' && v.state == stObjFirst:
			dst = append(dst, '}')
			v.stack = v.stack[:len(v.stack)-1]
			v.afterValue()
		default:
			return dst, false, syntaxErr("expected a key, got %q", c)
		}
		return dst, true, nil
	case stColon:
		switch {
		case isSpace(c):
		case c == ':':
			dst = append(dst, ':', ' ')
			v.state = stValue
		default:
			return dst, false, syntaxErr("expected ':', got %q", c)
		}
		return dst, true, nil
	case stArrFirst:
		if isSpace(c) {
			return dst, true, nil
		}
		if c == ']' {
			dst = append(dst, ']')
			v.stack = v.stack[:len(v.stack)-1]
			v.afterValue()
			return dst, true, nil
		}
		return v.startValue(dst, c)
	case stAfter:
		top := v.stack[len(v.stack)-1]
		switch {
		case isSpace(c):
		case c == ',':
			dst = append(dst, ',', ' ')
			if top == 'o' {
				v.state = stObjKey
			} else {
				v.state = stValue
			}
		case c == '}' && top == 'o', c == ']' && top == 'a':
			dst = append(dst, c)
			v.stack = v.stack[:len(v.stack)-1]
			v.afterValue()
		default:
			return dst, false, syntaxErr("expected ',' or a closing bracket, got %q", c)
		}
		return dst, true, nil
	case stString:
		return v.stringByte(dst, c)
	case stEscape:
		return v.escapeByte(dst, c)
	case stNumber:
		if isNumberByte(c) {
			v.appendNum(string(c))
			return dst, true, nil
		}
		if c == 'I' && string(v.num) == "-" {
			v.num = v.num[:0]
			v.pend = "-I"
			v.state = stLiteral
			return dst, true, nil
		}
		out, err := appendNumber(dst, v.takeNum())
		if err != nil {
			return dst, false, err
		}
		v.afterValue()
		return out, false, nil
	case stLiteral:
		lit := v.pend + string(c)
		for _, l := range literals {
			if l.text == lit {
				v.pend = ""
				v.afterValue()
				return append(dst, l.canon...), true, nil
			}
			if len(l.text) > len(lit) && l.text[:len(lit)] == lit {
				v.pend = lit
				return dst, true, nil
			}
		}
		return dst, false, syntaxErr("invalid literal %q", lit)
	}
	return dst, false, syntaxErr("input after the end of the value")
}

// literals are the bare words json.loads accepts, and how dumps writes them.
var literals = []struct{ text, canon string }{
	{"true", "true"}, {"false", "false"}, {"null", "null"},
	{"NaN", "NaN"}, {"Infinity", "Infinity"}, {"-Infinity", "-Infinity"},
}

func (v *Value) startValue(dst []byte, c byte) ([]byte, bool, error) {
	switch {
	case isSpace(c):
	case c == '{':
		v.stack = append(v.stack, 'o')
		v.state = stObjFirst
		dst = append(dst, '{')
	case c == '[':
		v.stack = append(v.stack, 'a')
		v.state = stArrFirst
		dst = append(dst, '[')
	case c == '"':
		v.key = false
		v.state = stString
		dst = append(dst, '"')
	case c == '-' || c >= '0' && c <= '9':
		v.num = v.num[:0]
		v.appendNum(string(c))
		v.state = stNumber
	case c == 't' || c == 'f' || c == 'n' || c == 'N' || c == 'I':
		v.pend = string(c)
		v.state = stLiteral
	default:
		return dst, false, syntaxErr("expected a value, got %q", c)
	}
	return dst, true, nil
}

func (v *Value) stringByte(dst []byte, c byte) ([]byte, bool, error) {
	switch {
	case c == '"':
		dst = v.flushHigh(dst)
		dst = append(dst, '"')
		if v.key {
			v.key = false
			v.state = stColon
		} else {
			v.afterValue()
		}
	case c == '\\':
		v.state = stEscape
		v.pend = ""
	case c < 0x20:
		return dst, false, syntaxErr("control character %q in string", c)
	default:
		dst = v.flushHigh(dst)
		// Other bytes, UTF-8 continuation bytes included, pass through:
		// ensure_ascii=False writes non-ASCII text raw.
		dst = append(dst, c)
	}
	return dst, true, nil
}

func (v *Value) escapeByte(dst []byte, c byte) ([]byte, bool, error) {
	if v.pend == "" {
		var r rune
		switch c {
		case '"', '\\', '/':
			r = rune(c)
		case 'b':
			r = '\b'
		case 'f':
			r = '\f'
		case 'n':
			r = '\n'
		case 'r':
			r = '\r'
		case 't':
			r = '\t'
		case 'u':
			v.pend = "u"
			return dst, true, nil
		default:
			return dst, false, syntaxErr("invalid escape %q", c)
		}
		v.state = stString
		return wire.AppendRune(v.flushHigh(dst), r), true, nil
	}
	if !isHex(c) {
		return dst, false, syntaxErr("invalid \\u escape")
	}
	v.pend += string(c)
	if len(v.pend) < 5 {
		return dst, true, nil
	}
	n, _ := strconv.ParseUint(v.pend[1:], 16, 32)
	r := rune(n)
	v.pend = ""
	v.state = stString
	switch {
	case r >= 0xD800 && r <= 0xDBFF:
		dst = v.flushHigh(dst)
		v.high = r
	case r >= 0xDC00 && r <= 0xDFFF && v.high != 0:
		r = 0x10000 + (v.high-0xD800)<<10 + (r - 0xDC00)
		v.high = 0
		dst = wire.AppendRune(dst, r)
	default:
		dst = wire.AppendRune(v.flushHigh(dst), r)
	}
	return dst, true, nil
}

// flushHigh writes a high surrogate that got no low half. Python keeps it
// as a lone surrogate, which cannot be written as UTF-8; U+FFFD is what a
// client receives in its place.
func (v *Value) flushHigh(dst []byte) []byte {
	if v.high == 0 {
		return dst
	}
	v.high = 0
	return utf8.AppendRune(dst, utf8.RuneError)
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// Codec saves or restores the machine's state (a checkpoint).
func (v *Value) Codec(c *statecodec.Codec) {
	statecodec.Enum(c, &v.state, int(stDone)+1)
	c.ByteSlice(&v.stack)
	c.Bool(&v.key)
	// An unfinished number's text goes where pend went before num existed,
	// so checkpoints read the same either way.
	pend := v.pend
	if v.state == stNumber && !c.Decoding() {
		pend = string(v.num)
	}
	c.String(&pend)
	if c.Decoding() {
		v.pend, v.num, v.numOwner = pend, nil, nil
		if v.state == stNumber {
			v.pend, v.num, v.numOwner = "", []byte(pend), v
		}
	}
	c.Rune(&v.high)
	if c.Decoding() {
		for _, k := range v.stack {
			if k != 'o' && k != 'a' {
				c.Failf("bad container %q in JSON state", k)
			}
		}
	}
}
