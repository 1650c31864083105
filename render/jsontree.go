package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vrender/vrender/render/jinja"
)

// jkind is the JSON type of a node.
type jkind uint8

const (
	jNull jkind = iota
	jBool
	jNum
	jStr
	jArr
	jObj
)

// node is a decoded JSON value that keeps object key order, as Python's
// json.loads does; the normaliser inspects it and then converts it to a
// template value once, without a second JSON round trip.
type node struct {
	k    jkind
	b    bool
	s    string // string value, or a number's literal
	arr  []*node
	keys []string
	vals []*node
}

var nullNode = &node{k: jNull}

// get returns an object's member.
func (n *node) get(key string) (*node, bool) {
	if n == nil || n.k != jObj {
		return nil, false
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i], true
		}
	}
	return nil, false
}

// set replaces a member in place or appends it, as dict assignment does.
func (n *node) set(key string, v *node) {
	for i, k := range n.keys {
		if k == key {
			n.vals[i] = v
			return
		}
	}
	n.keys = append(n.keys, key)
	n.vals = append(n.vals, v)
}

// isNull reports an absent or null value.
func (n *node) isNull() bool { return n == nil || n.k == jNull }

// str returns a string node's value.
func (n *node) str() (string, bool) {
	if n == nil || n.k != jStr {
		return "", false
	}
	return n.s, true
}

// truthy is Python's bool() of the decoded value.
func (n *node) truthy() bool {
	switch n.k {
	case jNull:
		return false
	case jBool:
		return n.b
	case jNum:
		f, err := strconv.ParseFloat(n.s, 64)
		return err != nil || f != 0
	case jStr:
		return n.s != ""
	case jArr:
		return len(n.arr) > 0
	case jObj:
		return len(n.keys) > 0
	}
	return false
}

// pyType is the Python type name of the decoded value, for error messages.
func (n *node) pyType() string {
	switch n.k {
	case jNull:
		return "NoneType"
	case jBool:
		return "bool"
	case jNum:
		if strings.ContainsAny(n.s, ".eE") {
			return "float"
		}
		return "int"
	case jStr:
		return "str"
	case jArr:
		return "list"
	}
	return "dict"
}

// value converts the node to a template value: objects become
// insertion-ordered dicts, numbers ints or floats as json.loads makes them.
func (n *node) value() (jinja.Value, error) {
	switch n.k {
	case jNull:
		return jinja.None(), nil
	case jBool:
		return jinja.Bool(n.b), nil
	case jStr:
		return jinja.Str(n.s), nil
	case jNum:
		if !strings.ContainsAny(n.s, ".eE") {
			if i, err := strconv.ParseInt(n.s, 10, 64); err == nil {
				return jinja.Int(i), nil
			}
		}
		// Floats and big ints: let the engine apply Python's rules.
		return jinja.FromJSON([]byte(n.s))
	case jArr:
		items := make([]jinja.Value, len(n.arr))
		for i, c := range n.arr {
			v, err := c.value()
			if err != nil {
				return jinja.Value{}, err
			}
			items[i] = v
		}
		return jinja.List(items), nil
	case jObj:
		d := jinja.NewDict(len(n.keys))
		for i, k := range n.keys {
			v, err := n.vals[i].value()
			if err != nil {
				return jinja.Value{}, err
			}
			d.SetStr(k, v)
		}
		return jinja.DictValue(d), nil
	}
	return jinja.Value{}, fmt.Errorf("bad JSON node kind %d", n.k)
}
