package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/segmentio/asm/ascii"

	"github.com/vrender/vrender/internal/pyfmt"
	"github.com/vrender/vrender/internal/pylax"

	"github.com/vrender/vrender/internal/wire"
)

// vLLM's server parses bodies with Python's json.loads and reports a syntax
// error as a "json_invalid" validation error carrying the decoder's message
// and position; internal/wire's scanner finds the error CPython finds.

// JSONSyntaxError is a body json.loads rejects: Msg is CPython's message
// ("Expecting value", "Expecting ',' delimiter", …) and Pos the offset in
// code points where the decoder stopped.
type JSONSyntaxError struct {
	Pos int
	Msg string
}

func (e *JSONSyntaxError) Error() string { return fmt.Sprintf("%s (char %d)", e.Msg, e.Pos) }

// FieldError is the error as FastAPI reports a body that is not JSON.
func (e *JSONSyntaxError) FieldError() pylax.FieldError {
	return pylax.FieldError{
		Type:  "json_invalid",
		Loc:   []any{e.Pos},
		Msg:   "JSON decode error",
		Input: json.RawMessage("{}"),
		Ctx:   []pylax.CtxEntry{{Key: "error", Value: e.Msg}},
	}
}

// ErrBodyNotParsable is a body Python cannot even hand to the JSON decoder
// (not UTF-8), or one json.loads fails with an error other than
// JSONDecodeError (nested deeper than its recursion limit, an integer over
// int_max_str_digits); FastAPI answers those with a plain 400 "There was
// an error parsing the body".
//
//lint:ignore ST1005 vLLM's message, byte for byte
var ErrBodyNotParsable = errors.New("There was an error parsing the body")

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// ParseJSONBody checks body as json.loads(body) would and returns the JSON
// text to decode (a leading UTF-8 BOM removed, as Python's detection does).
// Errors are *JSONSyntaxError or ErrBodyNotParsable.
//
// Python also accepts NaN, Infinity and -Infinity; vrender rejects them with
// the message Python gives for any other unexpected token, because Go's
// decoder cannot represent them and no field of ours accepts them.
func ParseJSONBody(body []byte) ([]byte, error) {
	body, err := bodyText(body)
	if err != nil {
		return nil, err
	}
	if err := bodyError(wire.Valid(body)); err != nil {
		return nil, err
	}
	if hasLongInt(body) {
		return nil, ErrBodyNotParsable
	}
	return body, nil
}

// ParseJSONTree is ParseJSONBody that also returns the decoded body, made
// in the same pass, for the Decode…Tree functions: the JSON text (BOM
// removed) and its tree, which aliases it.
func ParseJSONTree(body []byte) ([]byte, *wire.Node, error) {
	body, err := bodyText(body)
	if err != nil {
		return nil, nil, err
	}
	root, err := wire.ParseUTF8(body) // bodyText checked the whole body
	if err != nil {
		return nil, nil, bodyError(err)
	}
	if hasLongInt(body) {
		return nil, nil, ErrBodyNotParsable
	}
	return body, root, nil
}

// hasLongInt reports whether the valid JSON text b holds, outside
// strings, an integer literal of more than pyfmt.MaxIntDigits digits (the
// sign does not count), for which json.loads raises ValueError. Refusing
// such bodies up front also keeps every field decoder from converting a
// huge decimal, which costs quadratic time.
func hasLongInt(b []byte) bool {
	if !hasLongDigitRun(b) {
		return false
	}
	for i := 0; i < len(b); {
		switch c := b[i]; {
		case c == '"':
			i = stringEnd(b, i+1)
		case c == '-' || c >= '0' && c <= '9':
			if c == '-' {
				i++
			}
			start := i
			for i < len(b) && b[i] >= '0' && b[i] <= '9' {
				i++
			}
			if i-start > pyfmt.MaxIntDigits && (i == len(b) || b[i] != '.' && b[i] != 'e' && b[i] != 'E') {
				return true
			}
			// A fraction or exponent: the rest of the number is no integer.
			for i < len(b) && (b[i] >= '0' && b[i] <= '9' || b[i] == '.' || b[i] == 'e' || b[i] == 'E' || b[i] == '+' || b[i] == '-') {
				i++
			}
		default:
			i++
		}
	}
	return false
}

// hasLongDigitRun reports whether b holds more than pyfmt.MaxIntDigits digits in
// a row anywhere (strings included), looking only around every
// pyfmt.MaxIntDigits-th byte: such a run covers at least one of them.
func hasLongDigitRun(b []byte) bool {
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	for k := 0; k < len(b); k += pyfmt.MaxIntDigits {
		if !isDigit(b[k]) {
			continue
		}
		l, r := k, k
		for l > 0 && isDigit(b[l-1]) {
			l--
		}
		for r < len(b) && isDigit(b[r]) {
			r++
		}
		if r-l > pyfmt.MaxIntDigits {
			return true
		}
	}
	return false
}

// stringEnd is the index after the quote that closes the string whose
// text starts at b[i] (len(b) if none does).
func stringEnd(b []byte, i int) int {
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return len(b)
		}
		i += j
		k := i
		for k > 0 && b[k-1] == '\\' {
			k--
		}
		i++
		if (i-1-k)%2 == 0 {
			return i
		}
	}
}

func bodyText(body []byte) ([]byte, error) {
	body = bytes.TrimPrefix(body, utf8BOM)
	// ASCII is valid UTF-8, and a body with an image's data URL is 190 KB
	// of it, which the vector check passes 4x faster than utf8.Valid; a
	// body with other text fails it at the first such byte.
	if !ascii.Valid(body) && !utf8.Valid(body) {
		return nil, ErrBodyNotParsable
	}
	return body, nil
}

func bodyError(err error) error {
	var syn *wire.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &syn):
		return &JSONSyntaxError{Pos: syn.Pos, Msg: syn.Msg}
	default:
		return ErrBodyNotParsable
	}
}
