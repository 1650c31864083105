package render

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/vrender/vrender/internal/pyfmt"
	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
)

// refPyStr is PyStr as it was before it read the value's tree (items
// split by encoding/json), the reference of FuzzPyStrMatchesRef. PyStr is
// Python's str() of the value json.loads makes of raw: strings
// as they are, everything else as its repr.
func refPyStr(raw json.RawMessage) string {
	if s, ok := refJSONString(raw); ok {
		return s
	}
	return string(refAppendPyRepr(nil, raw))
}

// refAppendPyRepr appends Python's repr of a JSON value (dicts and lists as
// Python prints them, keys in document order).
func refAppendPyRepr(dst []byte, raw json.RawMessage) []byte {
	raw = bytes.TrimSpace(raw)
	switch refJSONKindOf(raw) {
	case '{':
		members, err := refObjectMembers(raw)
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
			dst = refAppendPyRepr(dst, m.value)
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
			dst = refAppendPyRepr(dst, it)
		}
		return append(dst, ']')
	case '"':
		s, _ := refJSONString(raw)
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

func refJSONKindOf(raw []byte) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

func refJSONString(raw json.RawMessage) (string, bool) {
	if refJSONKindOf(raw) != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

var pyStrSeeds = []string{`"plain"`, `"it's \u00e9"`, `null`, `true`, `1e2`, `-0.0`, `[1, "a", {"b": [null, false]}]`,
	`{"b":1,"a":2,"b":3}`, `{"\ud83d\ude00":"\n"}`, `12345678901234567890`, `[]`, `{}`}

// checkPyStrMatchesRef: on any JSON value the body parser takes (what
// callers pass: members of a decoded body), the same text.
func checkPyStrMatchesRef(t *testing.T, raw []byte) {
	t.Helper()
	if wire.Valid(raw) != nil || !json.Valid(raw) {
		return
	}
	if got, want := pylax.StrOfJSON(raw), refPyStr(raw); got != want {
		t.Fatalf("%q: PyStr %q, reference %q", raw, got, want)
	}
}

func TestPyStrMatchesRef(t *testing.T) {
	for _, s := range pyStrSeeds {
		checkPyStrMatchesRef(t, []byte(s))
	}
}

func FuzzPyStrMatchesRef(f *testing.F) {
	for _, s := range pyStrSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkPyStrMatchesRef)
}
