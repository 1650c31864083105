package pylax

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/vrender/vrender/internal/wire"
)

// refKeysInOrder is keysInOrder as it was before wire.Reader (a walk of
// encoding/json tokens), kept as the reference of FuzzKeysInOrderMatchesRef.
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
	if got, want := KeysInOrder(raw, members), refKeysInOrder(raw, members); !slices.Equal(got, want) {
		t.Fatalf("%q: keys %q, reference %q", raw, got, want)
	}
}

var keysSeeds = []string{`{"b":1,"a":[{"x":2}],"b":null,"\u00e9":"s"}`, `{}`, ` { "a" : { } } `, `{"a":1,"A":2}`}

func TestKeysInOrderMatchesRef(t *testing.T) {
	for _, s := range keysSeeds {
		checkKeysInOrderMatchesRef(t, []byte(s))
	}
	if got := KeysInOrder([]byte(`{"b":1,"a":2,"b":3}`), nil); !slices.Equal(got, []string{"b", "a"}) {
		t.Errorf("keys %q", got)
	}
}

func FuzzKeysInOrderMatchesRef(f *testing.F) {
	for _, s := range keysSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkKeysInOrderMatchesRef)
}
