package render

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/vrender/vrender/internal/wire"
)

// node is a decoded JSON value (internal/wire's tree, which keeps object
// key order as Python's json.loads does); the normaliser inspects it and
// then converts it to a template value once, without a second JSON round
// trip.
type node = wire.Node

const (
	jNull = wire.Null
	jBool = wire.Bool
	jNum  = wire.Number
	jStr  = wire.String
	jArr  = wire.Array
	jObj  = wire.Object
)

// maxJSONDepth bounds the nesting of a value handed to the template, so
// hostile input cannot exhaust the stack of the template engine.
const maxJSONDepth = 512

// errJSONTooDeep is parseJSON's error past maxJSONDepth.
var errJSONTooDeep = fmt.Errorf("JSON nested more than %d levels deep", maxJSONDepth)

// parseJSON decodes one JSON document as json.loads does: a syntax error
// reads as Python's JSONDecodeError. Duplicate object keys keep their first
// position and last value.
func parseJSON(data []byte) (*node, error) {
	n, err := wire.Parse(data)
	var syn *wire.SyntaxError
	if errors.As(err, &syn) && nestedPast(data[:min(syn.Pos+1, len(data))], maxJSONDepth) {
		// A decoder that stops at maxJSONDepth (as this one's limit reads)
		// refuses the text there, before the syntax error further on.
		return nil, errJSONTooDeep
	}
	return parsed(n, err)
}

// nestedPast reports whether the JSON text b starts a value inside more
// than limit open containers (outside strings), where a depth-limited
// decoder stops. Only error paths call it.
func nestedPast(b []byte, limit int) bool {
	depth, inStr := 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inStr:
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
			continue
		case c == ']' || c == '}':
			depth--
			continue
		case c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		}
		// c starts a value (or is part of a scalar's text).
		if depth > limit {
			return true
		}
		switch c {
		case '[', '{':
			depth++
		case '"':
			inStr = true
		}
	}
	return false
}

// parsed is parseJSON's answer for what a parser returned.
func parsed(n *node, err error) (*node, error) {
	if err == nil {
		return n, checkDepth(n)
	}
	// Only here, on failure: syn escapes through errors.As.
	var syn *wire.SyntaxError
	if errors.As(err, &syn) {
		return nil, errors.New(syn.PyString())
	}
	return nil, errJSONTooDeep
}

// checkDepth is parseJSON's depth limit for a tree decoded elsewhere.
func checkDepth(n *node) error {
	if n.Depth > maxJSONDepth {
		return errJSONTooDeep
	}
	return nil
}

// truthy is Python's bool() of the decoded value.
func truthy(n *node) bool {
	switch n.Kind {
	case jNull:
		return false
	case jBool:
		return n.B
	case jNum:
		f, err := strconv.ParseFloat(n.S, 64)
		return err != nil || f != 0
	case jStr:
		return n.S != ""
	case jArr:
		return len(n.Arr) > 0
	case jObj:
		return len(n.Keys) > 0
	}
	return false
}

// pyType is the Python type name of the decoded value, for error messages.
func pyType(n *node) string {
	switch n.Kind {
	case jNull:
		return "NoneType"
	case jBool:
		return "bool"
	case jNum:
		if n.IsFloat() {
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
