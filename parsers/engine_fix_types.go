package parsers

import (
	"strings"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/parsers/pyjson"
)

// engineFixArgTypes is vLLM's ParserEngine._fix_arg_types: when the tool
// has schema properties and args is a JSON object, values are coerced by
// the schema (strings through coerce_to_schema_type, nested objects and
// arrays by their "properties" and "items", other scalars through their
// JSON text); if anything changed the object is re-serialised with
// json.dumps, otherwise args is returned as given.
//
// Known deviation: JSON wire.Parse rejects but Python accepts (NaN,
// Infinity) leaves args unchanged.
func engineFixArgTypes(args string, props map[string]*wire.Node) string {
	if len(props) == 0 {
		return args
	}
	root, err := parseJNode(args)
	if err != nil || root.kind != 'o' {
		return args
	}
	if !coerceJObject(root, props) {
		return args
	}
	var b strings.Builder
	root.write(&b)
	return b.String()
}

// jnode is an ordered JSON value: Python dicts keep key order.
type jnode struct {
	// kind is 'o' (object), 'a' (array), 's' (string) or 'c' (any other
	// value, held as canonical text in Canon).
	kind  byte
	keys  []string
	vals  []*jnode
	str   string
	canon string
}

// parseJNode decodes s as json.loads would (wire.Parse), numbers in their
// canonical Python form.
func parseJNode(s string) (*jnode, error) {
	root, err := wire.Parse([]byte(s))
	if err != nil {
		return nil, err
	}
	return jnodeFrom(root)
}

func jnodeFrom(w *wire.Node) (*jnode, error) {
	switch w.Kind {
	case wire.Object, wire.Array:
		n := &jnode{kind: 'a', vals: make([]*jnode, 0, len(w.Vals)+len(w.Arr))}
		items := w.Arr
		if w.Kind == wire.Object {
			n.kind, n.keys, items = 'o', w.Keys, w.Vals
		}
		for _, item := range items {
			v, err := jnodeFrom(item)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
		return n, nil
	case wire.String:
		return &jnode{kind: 's', str: w.S}, nil
	case wire.Number:
		c, err := pyjson.Canonical(w.S)
		if err != nil {
			return nil, err
		}
		return &jnode{kind: 'c', canon: c}, nil
	case wire.Bool:
		if w.B {
			return &jnode{kind: 'c', canon: "true"}, nil
		}
		return &jnode{kind: 'c', canon: "false"}, nil
	}
	return &jnode{kind: 'c', canon: "null"}, nil
}

// write appends json.dumps(n, ensure_ascii=False).
func (n *jnode) write(b *strings.Builder) {
	switch n.kind {
	case 's':
		b.WriteString(pyjson.Quote(n.str))
	case 'c':
		b.WriteString(n.canon)
	default:
		open, closing := byte('['), byte(']')
		if n.kind == 'o' {
			open, closing = '{', '}'
		}
		b.WriteByte(open)
		for i, v := range n.vals {
			if i > 0 {
				b.WriteString(", ")
			}
			if n.kind == 'o' {
				b.WriteString(pyjson.Quote(n.keys[i]))
				b.WriteString(": ")
			}
			v.write(b)
		}
		b.WriteByte(closing)
	}
}

// coerceJObject is ParserEngine._coerce_dict.
func coerceJObject(n *jnode, props map[string]*wire.Node) bool {
	changed := false
	for i, k := range n.keys {
		prop, ok := props[k]
		if !ok || prop.Kind != wire.Object {
			continue
		}
		if coerceJValue(&n.vals[i], prop) {
			changed = true
		}
	}
	return changed
}

// coerceJValue is ParserEngine._coerce_value; it replaces *v when the
// value changes.
func coerceJValue(v **jnode, schema *wire.Node) bool {
	n := *v
	switch n.kind {
	case 's':
		c := coerceCanonical(n.str, schemaTypes(schema))
		if c == pyjson.Quote(n.str) {
			return false
		}
		*v = &jnode{kind: 'c', canon: c}
		return true
	case 'o':
		props := propertiesOf(schema)
		if props == nil {
			return false
		}
		return coerceJObject(n, props)
	case 'a':
		items, ok := schema.Get("items")
		if !ok || items.Kind != wire.Object {
			return false
		}
		changed := false
		for i := range n.vals {
			if coerceJValue(&n.vals[i], items) {
				changed = true
			}
		}
		return changed
	}
	c := coerceCanonical(n.canon, schemaTypes(schema))
	if c == n.canon {
		return false
	}
	*v = &jnode{kind: 'c', canon: c}
	return true
}
