package pylax

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/wire"
)

// refKeysInOrder is keysInOrder as it was before wire.Reader (a walk of
// encoding/json tokens), kept as the reference of FuzzKeysInOrderMatchesRef:
// the key order of an object's tree, which the readers now walk.
// It lists the keys of the JSON object raw in document order
// (the order pydantic walks a dict in), each once.
func refKeysInOrder(raw json.RawMessage, members map[string]json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	keys := make([]string, 0, len(members))
	seen := make(map[string]bool, len(members))
	if _, err := dec.Token(); err != nil { // {
		return keys
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		key, _ := tok.(string)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			break
		}
		if !seen[key] {
			seen[key] = true
			keys = append(keys, key)
		}
	}
	return keys
}

// checkKeysInOrderMatchesRef: on any JSON object (the only input callers
// pass: the members were decoded from it), the same keys in the same order.
func checkKeysInOrderMatchesRef(t *testing.T, raw []byte) {
	t.Helper()
	var members map[string]json.RawMessage
	if wire.Valid(raw) != nil || json.Unmarshal(raw, &members) != nil {
		return
	}
	n, err := wire.Parse(raw)
	if err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	if got, want := n.Keys, refKeysInOrder(raw, members); !slices.Equal(got, want) {
		t.Fatalf("%q: keys %q, reference %q", raw, got, want)
	}
}

var keysSeeds = []string{`{"b":1,"a":[{"x":2}],"b":null,"\u00e9":"s"}`, `{}`, ` { "a" : { } } `, `{"a":1,"A":2}`}

func TestKeysInOrderMatchesRef(t *testing.T) {
	for _, s := range keysSeeds {
		checkKeysInOrderMatchesRef(t, []byte(s))
	}
	if n, _ := wire.Parse([]byte(`{"b":1,"a":2,"b":3}`)); !slices.Equal(n.Keys, []string{"b", "a"}) || n.Vals[0].S != "3" {
		t.Errorf("keys %q", n.Keys)
	}
}

func FuzzKeysInOrderMatchesRef(f *testing.F) {
	for _, s := range keysSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkKeysInOrderMatchesRef)
}

// refReprOfJSON is reprOfJSON as it was before it walked the value's tree
// (items and members split by encoding/json), the reference of
// FuzzReprMatchesRef.
func refReprOfJSON(raw json.RawMessage) string {
	switch Kind(raw) {
	case 0, 'n':
		return "None"
	case 't':
		return "True"
	case 'f':
		return "False"
	case '"':
		s, _ := LaxString(raw)
		return StrRepr(s)
	case '[':
		var items []json.RawMessage
		_ = json.Unmarshal(raw, &items)
		var b bytes.Buffer
		b.WriteByte('[')
		for i, it := range items {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(refReprOfJSON(it))
		}
		b.WriteByte(']')
		return b.String()
	case '{':
		var members map[string]json.RawMessage
		_ = json.Unmarshal(raw, &members)
		var b bytes.Buffer
		b.WriteByte('{')
		for i, k := range refKeysInOrder(raw, members) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(StrRepr(k))
			b.WriteString(": ")
			b.WriteString(refReprOfJSON(members[k]))
		}
		b.WriteByte('}')
		return b.String()
	}
	return NumberStr(strings.TrimSpace(string(raw)))
}

var reprSeeds = []string{`null`, `true`, ` false `, `"a'b\"c"`, `[1, 2.50, -0, 1e400, "x"]`, `{"b":1,"a":{"c":[]},"b":[null]}`,
	`{"\u00e9":"\ud83d\ude00"}`, `-12.5E-3`, `[[[{}]]]`, `"\u0000\n\u2028"`}

// checkReprMatchesRef: on any JSON value the body parser takes (the only
// input callers pass), the tree's repr is the reference's.
func checkReprMatchesRef(t *testing.T, raw []byte) {
	t.Helper()
	if wire.Valid(raw) != nil || !json.Valid(raw) {
		return
	}
	if got, want := reprOfJSON(raw), refReprOfJSON(raw); got != want {
		t.Fatalf("%q: repr %q, reference %q", raw, got, want)
	}
}

func TestReprMatchesRef(t *testing.T) {
	for _, s := range reprSeeds {
		checkReprMatchesRef(t, []byte(s))
	}
}

func FuzzReprMatchesRef(f *testing.F) {
	for _, s := range reprSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkReprMatchesRef)
}
