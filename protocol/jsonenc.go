package protocol

import (
	"bytes"
	"encoding/json"
)

// vLLM's JSONResponse writes compact UTF-8 JSON without HTML escaping, so a
// token string such as "<|im_start|>" stays readable. encoding/json escapes
// <, > and & unless told otherwise; every body vrender writes goes through
// these helpers instead.

// MarshalJSON is json.Marshal without HTML escaping.
func MarshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
