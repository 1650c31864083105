package pylax

import (
	"encoding/json"
	"testing"

	"github.com/vrender/vrender/internal/wire"
)

// stringOf against json.Unmarshal into a string, the reading it replaces.
var stringSeeds = []string{
	`"\ud83d\ude00\u00e9\n"`, "\"\xff\"", "\"\xff\xc3\"", `"\udc00\ud800x"`, `"\ud800"`, `"x"`, `"a\"b"`, `1`, `null`, `"`, `"x" y`,
}

func FuzzStringOf(f *testing.F) {
	for _, s := range stringSeeds {
		f.Add(s)
	}
	f.Fuzz(checkStringOf)
}

func TestStringOfMatchesUnmarshal(t *testing.T) {
	for _, s := range stringSeeds {
		checkStringOf(t, s)
	}
}

func checkStringOf(t *testing.T, in string) {
	if s, ok := stringOf([]byte(in)); ok {
		var want string
		if err := json.Unmarshal([]byte(in), &want); err != nil || s != want {
			t.Fatalf("%q: stringOf %q, json %q (%v)", in, s, want, err)
		}
	}
	// The list readers (StringList, StopField) take an item's text from
	// its tree where they read it with LaxString before.
	if n, err := wire.Parse([]byte(in)); err == nil {
		got, gotOK := n.Text()
		want, wantOK := LaxString([]byte(in))
		if got != want || gotOK != wantOK {
			t.Fatalf("%q: tree text %q (%v), LaxString %q (%v)", in, got, gotOK, want, wantOK)
		}
	}
}
