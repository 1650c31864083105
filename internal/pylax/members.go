package pylax

import (
	"encoding/json"

	"github.com/vrender/vrender/internal/wire"
)

// Members splits a JSON object into its members in one pass of
// internal/wire (values alias data), with the result json.Unmarshal into
// map[string]json.RawMessage gives: the last value of a repeated key. ok is
// false for anything that is not one valid JSON object.
func Members(data []byte) (map[string]json.RawMessage, bool) {
	if Kind(data) != '{' {
		return nil, false
	}
	root, err := wire.Parse(data)
	if err != nil {
		return nil, false
	}
	return ObjectOf(root).Members, true
}

// MembersOf is json.Unmarshal into a member map (nil if raw is not a JSON
// object).
func MembersOf(raw []byte) map[string]json.RawMessage {
	m, _ := Members(raw)
	return m
}
