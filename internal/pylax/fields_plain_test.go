package pylax

import (
	"encoding/json"
	"testing"
)

// The shortcuts read what encoding/json reads, whenever they read at all.
func TestPlainJSONShortcuts(t *testing.T) {
	for _, raw := range []string{`"auto"`, ` "none" `, `""`, `"a\"b"`, `"\u0041"`, `"é"`, "\"a\x01\"", `"x`, `5`, `[]`, `[ ]`,
		" [\n] ", `[1]`, `[[]]`, `[]]`, `[`, `{}`} {
		checkPlainJSON(t, []byte(raw))
	}
}

func FuzzPlainJSONShortcuts(f *testing.F) {
	for _, s := range []string{`"auto"`, `[ ]`, `"a\u0001"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkPlainJSON)
}

func checkPlainJSON(t *testing.T, raw []byte) {
	if s, ok := PlainString(raw); ok {
		var want string
		if err := json.Unmarshal(raw, &want); err != nil || want != s {
			t.Fatalf("plainString(%q) = %q; json.Unmarshal %q, %v", raw, s, want, err)
		}
	}
	if IsEmptyArray(raw) {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil || len(items) != 0 {
			t.Fatalf("isEmptyArray(%q); json.Unmarshal %d items, %v", raw, len(items), err)
		}
	} else if json.Valid(raw) {
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) == nil && len(items) == 0 && items != nil {
			t.Fatalf("isEmptyArray(%q) = false for an empty array", raw)
		}
	}
}
