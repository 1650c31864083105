package render

import (
	"encoding/json"
	"strconv"

	"github.com/vrender/vrender/internal/pyfmt"
	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
)

// Python's json module, as far as vLLM's output depends on it: values that
// pass through a Python dict are re-serialised by json.dumps, which
// normalises numbers and escapes strings its own way.

// pyJSONDumps is Python's json.dumps with its default separators (", " and
// ": ") and ensure_ascii, of a JSON value, keys in document order.
func pyJSONDumps(raw json.RawMessage) (string, error) {
	n, err := wire.Parse(raw)
	if err != nil {
		return "", err
	}
	return string(appendPyDumps(nil, n)), nil
}

// pyJSONCompact is how vLLM's JSONResponse writes a value json.loads read
// from raw: compact separators, non-ASCII kept, numbers as Python prints
// them (1e2 becomes 100.0). A repeated key keeps its first position and its
// last value, as a Python dict does.
func pyJSONCompact(raw json.RawMessage) (json.RawMessage, error) {
	n, err := wire.Parse(raw)
	if err != nil {
		return nil, err
	}
	return pylax.AppendPyCompact(nil, n), nil
}

// appendPyDumps appends json.dumps of the value json.loads makes of n,
// with the default ", " and ": " separators and ensure_ascii.
func appendPyDumps(dst []byte, n *wire.Node) []byte {
	switch n.Kind {
	case wire.Object:
		dst = append(dst, '{')
		for i, k := range n.Keys {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = append(wire.AppendStringASCII(dst, k), ": "...)
			dst = appendPyDumps(dst, n.Vals[i])
		}
		return append(dst, '}')
	case wire.Array:
		dst = append(dst, '[')
		for i, it := range n.Arr {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendPyDumps(dst, it)
		}
		return append(dst, ']')
	case wire.String:
		return wire.AppendStringASCII(dst, n.S)
	case wire.Number:
		return append(dst, pyNumber(n.S)...)
	case wire.Bool:
		return strconv.AppendBool(dst, n.B)
	}
	return append(dst, "null"...)
}

// pyNumber is how json.dumps writes the number json.loads read from lit.
// An overflowing float keeps its literal: json.dumps would write Infinity,
// which is not JSON and could not travel on as a json.RawMessage.
func pyNumber(lit string) string {
	b, ok := pyfmt.AppendNumberLiteral(nil, lit)
	if !ok {
		return lit
	}
	if s := string(b); s != "inf" && s != "-inf" {
		return s
	}
	return lit
}

// PyJSONCompact is how vLLM's JSONResponse writes the value json.loads
// makes of raw (compact, non-ASCII kept, numbers as Python prints them):
// for a client's or a parser's JSON that vLLM parses and re-serialises.
func PyJSONCompact(raw json.RawMessage) (json.RawMessage, error) { return pyJSONCompact(raw) }

// PyJSONDumps is Python's json.dumps of the value json.loads makes of raw
// (", " and ": " separators, ensure_ascii, keys in document order): for the
// front ends that hand a client's JSON to the template as a string.
func PyJSONDumps(raw json.RawMessage) (string, error) { return pyJSONDumps(raw) }
