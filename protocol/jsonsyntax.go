package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

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
func (e *JSONSyntaxError) FieldError() FieldError {
	return FieldError{
		Type:  "json_invalid",
		Loc:   []any{e.Pos},
		Msg:   "JSON decode error",
		Input: json.RawMessage("{}"),
		Ctx:   []CtxEntry{{Key: "error", Value: e.Msg}},
	}
}

// ErrBodyNotParsable is a body Python cannot even hand to the JSON decoder
// (not UTF-8, or nested deeper than its recursion limit); FastAPI answers
// those with a plain 400 "There was an error parsing the body".
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
	root, err := wire.Parse(body)
	if err != nil {
		return nil, nil, bodyError(err)
	}
	return body, root, nil
}

func bodyText(body []byte) ([]byte, error) {
	body = bytes.TrimPrefix(body, utf8BOM)
	if !utf8.Valid(body) {
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
