package anthropic

import (
	"github.com/vrender/vrender/internal/pyfmt"
	"github.com/vrender/vrender/internal/wire"
)

// The conversion hands some of a client's values to the chat request as
// Python prints them: a tool_use input as json.dumps writes it, an image
// source's non-string members and an assistant's tool_result list as
// str() does. They are written from the body's trees, which hold the dict
// json.loads makes (a repeated key once, at its first place, with its
// last value).

// appendPyDumps appends json.dumps(v) of the value n: ", " and ": "
// separators, ensure_ascii. An overflowing float keeps its literal where
// Python writes Infinity, as render.PyJSONDumps did.
func appendPyDumps(dst []byte, n *wire.Node) []byte {
	return appendPyValue(dst, n, wire.AppendStringASCII, func(dst []byte, n *wire.Node) []byte {
		switch n.Kind {
		case wire.String:
			return wire.AppendStringASCII(dst, n.S)
		case wire.Number:
			out, ok := pyfmt.AppendNumberLiteral(dst, n.S)
			if s := string(out[len(dst):]); !ok || s == "inf" || s == "-inf" {
				return append(dst, n.S...)
			}
			return out
		case wire.Bool:
			if n.B {
				return append(dst, "true"...)
			}
			return append(dst, "false"...)
		}
		return append(dst, "null"...)
	})
}

// pyStr is Python's str() of the value n: a string as it is, anything
// else its repr.
func pyStr(n *wire.Node) string {
	if n.Kind == wire.String {
		return n.S
	}
	return string(appendPyRepr(nil, n))
}

// appendPyRepr appends Python's repr of the value n.
func appendPyRepr(dst []byte, n *wire.Node) []byte {
	return appendPyValue(dst, n, strRepr, func(dst []byte, n *wire.Node) []byte {
		switch n.Kind {
		case wire.String:
			return strRepr(dst, n.S)
		case wire.Number:
			if out, ok := pyfmt.AppendNumberLiteral(dst, n.S); ok {
				return out
			}
			return append(dst, n.S...)
		case wire.Bool:
			if n.B {
				return append(dst, "True"...)
			}
			return append(dst, "False"...)
		}
		return append(dst, "None"...)
	})
}

// strRepr is repr of a str; a byte that is not UTF-8 (which a Python str
// cannot hold) is written as U+FFFD's escape, as json.loads' replacement.
func strRepr(dst []byte, s string) []byte { return pyfmt.AppendStrRepr(dst, s, `\ufffd`) }

// appendPyValue appends the value n with dicts and lists punctuated as
// both json.dumps and repr write them (", " between items, ": " after a
// key), its keys written by key and its scalars by leaf.
func appendPyValue(dst []byte, n *wire.Node, key func([]byte, string) []byte, leaf func([]byte, *wire.Node) []byte) []byte {
	switch n.Kind {
	case wire.Object:
		dst = append(dst, '{')
		for i, k := range n.Keys {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = append(key(dst, k), ": "...)
			dst = appendPyValue(dst, n.Vals[i], key, leaf)
		}
		return append(dst, '}')
	case wire.Array:
		dst = append(dst, '[')
		for i, v := range n.Arr {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendPyValue(dst, v, key, leaf)
		}
		return append(dst, ']')
	}
	return leaf(dst, n)
}
