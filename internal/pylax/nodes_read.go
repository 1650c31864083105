package pylax

import "github.com/vrender/vrender/internal/wire"

// Readers of an object's members as the body's parse decoded them: a
// front end keeps the trees they return instead of decoding a member's
// text again.

// ObjectAt is the decoded JSON object n as an object of its own, its
// errors located at loc.
func ObjectAt(n *wire.Node, loc []any) *Object {
	o := ObjectOf(n)
	o.Loc = loc
	return o
}

// ListNodes is List returning the items' trees: present reports whether
// the key was there and not null; a wrong type is recorded as list_type.
func (o *Object) ListNodes(name string, required bool) (items []*wire.Node, present bool) {
	n, ok := o.Nodes[name]
	switch {
	case !ok:
		if required {
			o.Missing(name)
		}
		return nil, false
	case !required && n.IsNull():
		return nil, false
	case n.Kind != wire.Array:
		o.Fail(o.At(name), "list_type", "Input should be a valid list", n.Raw)
		return nil, false
	}
	return n.Arr, true
}

// NestedNode is Nested read from the member's tree: nil for an absent or
// null member, nil after recording pydantic's type error for a
// non-object, else the member as an object whose errors are located under
// name. n is the member's tree (nil when absent).
func (o *Object) NestedNode(name string, dataclass bool, class string) (sub *Object, n *wire.Node) {
	n = o.Nodes[name]
	if n == nil || n.Kind != wire.Object {
		o.Nested(name, dataclass, class) // records the error for a non-object
		return nil, n
	}
	return ObjectAt(n, o.At(name)), n
}

// ItemObject is the list item n at loc as an object of model class, or
// nil after recording pydantic's error for a non-object.
func (o *Object) ItemObject(loc []any, n *wire.Node, class string) *Object {
	if n.Kind != wire.Object {
		o.Fail(loc, "model_type", "Input should be a valid dictionary or instance of "+class, n.Raw,
			CtxEntry{Key: "class_name", Value: class})
		return nil
	}
	return ObjectAt(n, loc)
}
