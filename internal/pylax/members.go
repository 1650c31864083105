package pylax

import (
	"encoding/json"
	"strings"

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

// Items splits a JSON array into its items' text in one pass of
// internal/wire (values alias data), with the result json.Unmarshal into
// []json.RawMessage gives: an empty list is empty, not nil. ok is false for
// anything that is not one valid JSON array.
func Items(data []byte) ([]json.RawMessage, bool) {
	if Kind(data) != '[' {
		return nil, false
	}
	items := []json.RawMessage{}
	r := wire.NewReader(data)
	err := r.Array(func() error {
		raw, err := r.Raw()
		items = append(items, raw)
		return err
	})
	if err != nil || r.End() != nil {
		return nil, false
	}
	return items, true
}

// ItemsOf is json.Unmarshal into a list of items (nil if raw is not a
// JSON array).
func ItemsOf(raw []byte) []json.RawMessage {
	items, _ := Items(raw)
	return items
}

// stringOf reads a JSON string as json.Unmarshal into a string does; ok is
// false for anything that is not one valid JSON string.
func stringOf(raw []byte) (string, bool) {
	r := wire.NewReader(raw)
	s, err := r.String()
	if err != nil || r.End() != nil {
		return "", false
	}
	return strings.Clone(s), true
}
