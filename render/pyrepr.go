package render

import (
	"bytes"
	"encoding/json"

	"github.com/vrender/vrender/internal/pyfmt"
)

// PyStr is Python's str() of the value json.loads makes of raw: strings
// as they are, everything else as its repr.
func PyStr(raw json.RawMessage) string {
	if s, ok := jsonString(raw); ok {
		return s
	}
	return string(appendPyRepr(nil, raw))
}

// appendPyRepr appends Python's repr of a JSON value (dicts and lists as
// Python prints them, keys in document order).
func appendPyRepr(dst []byte, raw json.RawMessage) []byte {
	raw = bytes.TrimSpace(raw)
	switch jsonKindOf(raw) {
	case '{':
		members, err := objectMembers(raw)
		if err != nil {
			return append(dst, raw...)
		}
		dst = append(dst, '{')
		for i, m := range members {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = pyfmt.AppendStrRepr(dst, m.key, `\ufffd`)
			dst = append(dst, ": "...)
			dst = appendPyRepr(dst, m.value)
		}
		return append(dst, '}')
	case '[':
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return append(dst, raw...)
		}
		dst = append(dst, '[')
		for i, it := range items {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendPyRepr(dst, it)
		}
		return append(dst, ']')
	case '"':
		s, _ := jsonString(raw)
		return pyfmt.AppendStrRepr(dst, s, `\ufffd`)
	case 't':
		return append(dst, "True"...)
	case 'f':
		return append(dst, "False"...)
	case 'n':
		return append(dst, "None"...)
	}
	if out, ok := pyfmt.AppendNumberLiteral(dst, string(raw)); ok {
		return out
	}
	return append(dst, raw...)
}

func jsonKindOf(raw []byte) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

func jsonString(raw json.RawMessage) (string, bool) {
	if jsonKindOf(raw) != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
