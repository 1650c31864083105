package pylax

import (
	"encoding/json"
	"testing"
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
}
