package protocol

import (
	"encoding/json"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
)

// object is a request body under validation: pylax's reader, with the
// readers of protocol's own field types (tool_choice, structured_outputs,
// ...) as methods beside the generic ones.
type object struct{ *pylax.Object }

// decodeBody is pylax.DecodeBody for protocol's models.
func decodeBody(data []byte, className string) (*object, *pylax.FieldError) {
	o, fe := pylax.DecodeBody(data, className)
	if fe != nil {
		return nil, fe
	}
	return &object{o}, nil
}

// decodeTree is pylax.DecodeTree for protocol's models.
func decodeTree(root *wire.Node, data []byte, className string) (*object, *pylax.FieldError) {
	o, fe := pylax.DecodeTree(root, data, className)
	if fe != nil {
		return nil, fe
	}
	return &object{o}, nil
}

// decodeDerenderBody is decodeBody without the copy: the streaming derender
// endpoint decodes one small body per generated token, and its requests do
// not outlive the body.
func decodeDerenderBody(data []byte, className string) (*object, *pylax.FieldError) {
	if pylax.Kind(data) == '{' {
		if root, err := wire.Parse(data); err == nil {
			return &object{pylax.ObjectOf(root)}, nil
		}
	}
	return decodeBody(data, className)
}

// derenderTree is decodeDerenderBody for a body ParseJSONTree decoded.
func derenderTree(root *wire.Node, data []byte, className string) (*object, *pylax.FieldError) {
	if root != nil && root.Kind == wire.Object {
		return &object{pylax.ObjectOf(root)}, nil
	}
	return decodeTree(root, data, className)
}

// fresh is pylax's Fresh for protocol's models.
func (o *object) fresh() *object { return &object{o.Fresh()} }

// sub is pylax's Sub for protocol's models.
func (o *object) sub(name string) *object { return &object{o.Sub(name)} }

// raw is member name's JSON text, nil when absent.
func (o *object) raw(name string) json.RawMessage {
	raw, _ := o.Member(name)
	return raw
}
