package protocol

import (
	"encoding/json"

	"github.com/vrender/vrender/internal/wire"
)

// wireMembers splits a JSON object into its members in one pass of
// internal/wire (values alias data), with the result json.Unmarshal into
// map[string]json.RawMessage gives: the last value of a repeated key. ok is
// false for anything that is not one valid JSON object.
func wireMembers(data []byte) (map[string]json.RawMessage, bool) {
	if jsonKind(data) != '{' {
		return nil, false
	}
	root, err := wire.Parse(data)
	if err != nil {
		return nil, false
	}
	return objectOf(root).members, true
}

// decodeDerenderBody is decodeBody without the copy: the streaming derender
// endpoint decodes one small body per generated token, and its requests do
// not outlive the body.
func decodeDerenderBody(data []byte, className string) (*object, *FieldError) {
	if jsonKind(data) == '{' {
		if root, err := wire.Parse(data); err == nil {
			return objectOf(root), nil
		}
	}
	return decodeBody(data, className)
}

// derenderTree is decodeDerenderBody for a body ParseJSONTree decoded.
func derenderTree(root *wire.Node, data []byte, className string) (*object, *FieldError) {
	if root != nil && root.Kind == wire.Object {
		return objectOf(root), nil
	}
	return decodeTree(root, data, className)
}

// membersOf is json.Unmarshal into a member map (nil if raw is not a JSON
// object).
func membersOf(raw []byte) map[string]json.RawMessage {
	m, _ := wireMembers(raw)
	return m
}
