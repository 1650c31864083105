package pylax

import (
	"strconv"
	"strings"

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
