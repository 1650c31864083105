package pylax

import (
	"strconv"
	"strings"

	"github.com/vrender/vrender/internal/pyfmt"
	"github.com/vrender/vrender/internal/wire"
)

// Readers of a member's decoded tree, for the models that read the body's
// trees rather than its text.

// TruthyNode is Python's bool() of the value json.loads makes of n (n not
// nil): Truthy for a tree.
func TruthyNode(n *wire.Node) bool {
	switch n.Kind {
	case wire.Null:
		return false
	case wire.Bool:
		return n.B
	case wire.Number:
		if !n.IsFloat() {
			// An int (or NaN/Infinity, which are truthy): zero only when
			// every digit is.
			return strings.Trim(strings.TrimPrefix(n.S, "-"), "0") != ""
		}
		// A float, an underflowing literal being 0.0 as in Python.
		f, _ := strconv.ParseFloat(n.S, 64)
		return f != 0
	case wire.String:
		return n.S != ""
	case wire.Array:
		return len(n.Arr) > 0
	case wire.Object:
		return len(n.Keys) > 0
	}
	return true
}

// AppendPyCompact appends the value json.loads makes of n as vLLM's
// JSONResponse writes it: compact separators, non-ASCII kept, numbers as
// Python prints them (1e2 is 100.0), an object's repeated key at its first
// position with its last value (the tree keeps it so). An overflowing float
// keeps its literal: Python would write Infinity, which is not JSON.
func AppendPyCompact(dst []byte, n *wire.Node) []byte {
	switch n.Kind {
	case wire.Null:
		return append(dst, "null"...)
	case wire.Bool:
		return wire.AppendBool(dst, n.B)
	case wire.Number:
		num, ok := pyfmt.AppendNumberLiteral(dst, n.S)
		if !ok {
			return append(dst, n.S...)
		}
		if s := string(num[len(dst):]); s == "inf" || s == "-inf" {
			return append(dst, n.S...)
		}
		return num
	case wire.String:
		return wire.AppendString(dst, n.S)
	case wire.Array:
		dst = append(dst, '[')
		for i, v := range n.Arr {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendPyCompact(dst, v)
		}
		return append(dst, ']')
	}
	dst = append(dst, '{')
	for i, k := range n.Keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(wire.AppendString(dst, k), ':')
		dst = AppendPyCompact(dst, n.Vals[i])
	}
	return append(dst, '}')
}

// AppendPyDumps appends Python's json.dumps of the value json.loads makes
// of n, with the default ", " and ": " separators and ensure_ascii; a
// repeated key is already one member of n. An overflowing float keeps its
// literal where json.dumps would write Infinity, which is not JSON and
// could not travel on as JSON text.
func AppendPyDumps(dst []byte, n *wire.Node) []byte {
	switch n.Kind {
	case wire.Object:
		dst = append(dst, '{')
		for i, k := range n.Keys {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = append(wire.AppendStringASCII(dst, k), ": "...)
			dst = AppendPyDumps(dst, n.Vals[i])
		}
		return append(dst, '}')
	case wire.Array:
		dst = append(dst, '[')
		for i, it := range n.Arr {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = AppendPyDumps(dst, it)
		}
		return append(dst, ']')
	case wire.String:
		return wire.AppendStringASCII(dst, n.S)
	case wire.Number:
		num, ok := pyfmt.AppendNumberLiteral(dst, n.S)
		if s := string(num[len(dst):]); !ok || s == "inf" || s == "-inf" {
			return append(dst, n.S...)
		}
		return num
	case wire.Bool:
		return wire.AppendBool(dst, n.B)
	}
	return append(dst, "null"...)
}
