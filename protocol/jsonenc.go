package protocol

import (
	"bytes"
	"encoding/json"

	"github.com/vrender/vrender/internal/wire"
)

// vLLM's JSONResponse writes compact UTF-8 JSON without HTML escaping, so a
// token string such as "<|im_start|>" stays readable. encoding/json escapes
// <, > and & unless told otherwise; every body vrender writes goes through
// these helpers instead.

// Appender is a response type that writes its own JSON body (package wire's
// rules) by appending to a buffer, so nothing re-validates or re-compacts
// it.
type Appender interface {
	AppendJSON(dst []byte) ([]byte, error)
}

// AppendJSON appends v's body: through its own AppendJSON when it has one,
// through MarshalJSON otherwise.
func AppendJSON(dst []byte, v any) ([]byte, error) {
	if a, ok := v.(Appender); ok {
		return a.AppendJSON(dst)
	}
	b, err := MarshalJSON(v)
	return append(dst, b...), err
}

// MarshalJSON is json.Marshal without HTML escaping, byte-identical to
// Python's json.dumps(ensure_ascii=False) on strings: encoding/json also
// escapes U+2028 and U+2029 (for JavaScript), which Python writes raw.
func MarshalJSON(v any) ([]byte, error) {
	if a, ok := v.(Appender); ok {
		return a.AppendJSON(nil)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return wire.UnescapeLineSeparators(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// RawJSON is a body already encoded.
type RawJSON []byte

// AppendJSON implements Appender.
func (b RawJSON) AppendJSON(dst []byte) ([]byte, error) { return append(dst, b...), nil }
