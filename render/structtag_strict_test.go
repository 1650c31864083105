package render

import (
	"encoding/json"
	"testing"
)

// A tool encoding/json reads a strict member from is always one
// mayBeStrict suspects, so skipping the decode never loses a strict tool.
func TestMayBeStrict(t *testing.T) {
	for _, raw := range []string{`{"type":"function","function":{"name":"f","strict":true}}`, `{"function":{"STRICT":true}}`,
		`{"function":{"str\u0069ct":true}}`, `{"function":{"name":"f"}}`, `{"function":{"ſtrict":true}}`, `{"function":{"name":"strict"}}`} {
		checkMayBeStrict(t, []byte(raw))
	}
	if mayBeStrict([]json.RawMessage{json.RawMessage(`{"type":"function","function":{"name":"f","parameters":{}}}`)}) {
		t.Fatal("a plain tool without strict must take the shortcut")
	}
}

func FuzzMayBeStrict(f *testing.F) {
	f.Add([]byte(`{"function":{"strict":true}}`))
	f.Add([]byte(`{"function":{"Strict":true}}`))
	f.Fuzz(checkMayBeStrict)
}

func checkMayBeStrict(t *testing.T, raw []byte) {
	var tool struct {
		Function *struct {
			Strict *bool `json:"strict"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &tool) != nil || tool.Function == nil || tool.Function.Strict == nil {
		return
	}
	if !mayBeStrict([]json.RawMessage{raw}) {
		t.Fatalf("%q has strict=%v for encoding/json but mayBeStrict says no", raw, *tool.Function.Strict)
	}
}
