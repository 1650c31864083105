package protocol

import (
	"encoding/json"
	"strings"
	"testing"
)

// refDecodeToolChoice is decodeToolChoice as it was over encoding/json,
// kept to hold the wire version to it; one change: a null with space
// around it is unset (it read an invalid string "").
func refDecodeToolChoice(raw json.RawMessage) ToolChoice {
	if len(raw) == 0 || strings.Trim(string(raw), " \t\n\r") == "null" {
		return ToolChoice{Kind: ToolChoiceUnset}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		switch s {
		case "none":
			return ToolChoice{Kind: ToolChoiceNone}
		case "auto":
			return ToolChoice{Kind: ToolChoiceAuto}
		case "required":
			return ToolChoice{Kind: ToolChoiceRequired}
		}
		return ToolChoice{Kind: ToolChoiceBadString, Name: s}
	}
	var named struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	err := json.Unmarshal(raw, &named)
	if err != nil || named.Function.Name == "" {
		return ToolChoice{Kind: ToolChoiceBad}
	}
	return ToolChoice{Kind: ToolChoiceNamed, Name: named.Function.Name}
}

// foldedKeys reports whether raw has a key that encoding/json would match
// to function or name only by folding case (pydantic, and so vLLM and
// decodeToolChoice, does not), or a repeated name after which
// encoding/json keeps the earlier value on a type error.
func foldedKeys(raw []byte) bool {
	var walk func(v any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				for _, f := range []string{"function", "name"} {
					if k != f && strings.EqualFold(k, f) {
						return true
					}
				}
				if walk(x) {
					return true
				}
			}
		case []any:
			for _, x := range v {
				if walk(x) {
					return true
				}
			}
		}
		return false
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	return walk(v) || strings.Count(string(raw), `"name"`) > 1 || strings.Count(string(raw), `"function"`) > 1
}

var toolChoiceCases = []string{
	``, `null`, `"none"`, `"auto"`, `"required"`, `"\u006eone"`, ` "auto" `, `"other"`, `""`, `"caf\u00e9"`,
	`{"type":"function","function":{"name":"get_weather"}}`, `{"function":{"name":"f"}}`,
	`{"function":{"name":""}}`, `{"function":{}}`, `{"function":null}`, `{"function":"f"}`, `{"function":{"name":5}}`,
	`{}`, `[]`, `["auto"]`, `5`, `true`, `"auto`, `{"function":{"name":"f"}`, `{"type":"function"}`,
	`{"function":{"name":"f","extra":1},"type":"function"}`, `{"Function":{"name":"f"}}`, `{"function":{"NAME":"f"}}`,
	`{"function":{"name":"a"},"function":{"name":"b"}}`, "\"\xff\"",
}

func TestDecodeToolChoiceMatchesEncodingJSON(t *testing.T) {
	for _, c := range toolChoiceCases {
		checkToolChoice(t, []byte(c))
	}
	// Keys matched only by case folding: encoding/json took them, pydantic
	// (and now decodeToolChoice) does not.
	for _, c := range []string{`{"Function":{"name":"f"}}`, `{"function":{"NAME":"f"}}`} {
		if got := decodeToolChoice([]byte(c)); got.Kind != ToolChoiceBad {
			t.Errorf("%s: %v, want ToolChoiceBad", c, got.Kind)
		}
	}
}

func checkToolChoice(t *testing.T, raw []byte) {
	t.Helper()
	got, want := decodeToolChoice(raw), refDecodeToolChoice(raw)
	// AppendJSON writes what decodes to the same choice.
	if again := decodeToolChoice(got.AppendJSON(nil)); again.Kind != got.Kind || again.Name != got.Name {
		t.Errorf("decodeToolChoice(%q) = %v %q; its AppendJSON %s reads %v %q", raw, got.Kind, got.Name, got.AppendJSON(nil), again.Kind, again.Name)
	}
	if foldedKeys(raw) {
		return
	}
	if got.Kind != want.Kind || got.Name != want.Name {
		t.Errorf("decodeToolChoice(%q) = %v %q, encoding/json read %v %q", raw, got.Kind, got.Name, want.Kind, want.Name)
	}
}

func FuzzDecodeToolChoice(f *testing.F) {
	for _, c := range toolChoiceCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkToolChoice(t, raw)
	})
}
