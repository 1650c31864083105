package protocol

import (
	"bytes"
	"encoding/json"
)

// vLLM's JSONResponse writes compact UTF-8 JSON without HTML escaping, so a
// token string such as "<|im_start|>" stays readable. encoding/json escapes
// <, > and & unless told otherwise; every body vrender writes goes through
// these helpers instead.

// MarshalJSON is json.Marshal without HTML escaping, byte-identical to
// Python's json.dumps(ensure_ascii=False) on strings: encoding/json also
// escapes U+2028 and U+2029 (for JavaScript), which Python writes raw.
func MarshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return unescapeLineSeparators(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// unescapeLineSeparators rewrites the escapes \u2028 and \u2029 that
// encoding/json writes as the raw characters. An escaped backslash followed
// by "u2028" is text, not an escape, so escapes are skipped pairwise.
func unescapeLineSeparators(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u202`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 >= len(b) {
			out = append(out, c)
			continue
		}
		if b[i+1] == 'u' && i+5 < len(b) && string(b[i+2:i+5]) == "202" && (b[i+5] == '8' || b[i+5] == '9') {
			if b[i+5] == '8' {
				out = append(out, "\u2028"...)
			} else {
				out = append(out, "\u2029"...)
			}
			i += 5
			continue
		}
		out = append(out, c, b[i+1])
		i++
	}
	return out
}
