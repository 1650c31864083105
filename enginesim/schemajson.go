package enginesim

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vrender/vrender/internal/wire"
)

// Schemas, structural tags and tool signatures are read with wire.Parse,
// whose tree keeps object key order: schemas are walked property by
// property, and the JSON written from them must list properties in the
// order the schema declares them. A repeated key keeps its first position
// and its last value, as json.loads on the engine side makes it.

// maxJSONDepth bounds the nesting of a schema the simulator walks.
const maxJSONDepth = 128

// parseJSONValue parses one JSON document.
func parseJSONValue(data []byte) (*wire.Node, error) {
	v, err := wire.Parse(data)
	if err != nil {
		return nil, err
	}
	if v.Depth > maxJSONDepth {
		return nil, errors.New("JSON nested too deeply")
	}
	return v, nil
}

// member returns an object member, or nil.
func member(v *wire.Node, key string) *wire.Node {
	m, _ := v.Get(key)
	return m
}

// withoutKeys returns a copy of an object minus some keys.
func withoutKeys(v *wire.Node, drop ...string) *wire.Node {
	out := &wire.Node{Kind: wire.Object}
	for i, k := range v.Keys {
		skip := false
		for _, d := range drop {
			skip = skip || k == d
		}
		if !skip {
			out.Keys = append(out.Keys, k)
			out.Vals = append(out.Vals, v.Vals[i])
		}
	}
	return out
}

// mergedSchema returns an object with other's members over v's, except
// that "properties" objects are united and "required" lists concatenated,
// as combining two schemas (allOf, a $ref with siblings) needs.
func mergedSchema(v, other *wire.Node) *wire.Node {
	if other == nil || other.Kind != wire.Object {
		return v
	}
	out := withoutKeys(v, other.Keys...)
	for i, k := range other.Keys {
		val := other.Vals[i]
		if mine := member(v, k); mine != nil && mine.Kind == val.Kind {
			switch {
			case k == "properties" && val.Kind == wire.Object:
				val = mergedSchema(mine, val)
			case k == "required" && val.Kind == wire.Array:
				val = &wire.Node{Kind: wire.Array, Arr: append(append([]*wire.Node{}, mine.Arr...), val.Arr...)}
			}
		}
		out.Keys = append(out.Keys, k)
		out.Vals = append(out.Vals, val)
	}
	return out
}

// numberMember returns a number member as float64.
func numberMember(v *wire.Node, key string) (float64, bool) {
	m := member(v, key)
	if m == nil || m.Kind != wire.Number {
		return 0, false
	}
	var f float64
	if _, err := fmt.Sscan(m.S, &f); err != nil {
		return 0, false
	}
	return f, true
}

// writePy writes v the way Python's json.dumps does by default
// (", " and ": " separators), which is how models print JSON.
func writePy(b *strings.Builder, v *wire.Node) {
	switch v.Kind {
	case wire.Object:
		b.WriteByte('{')
		for i, k := range v.Keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writeJSONString(b, k)
			b.WriteString(": ")
			writePy(b, v.Vals[i])
		}
		b.WriteByte('}')
	case wire.Array:
		b.WriteByte('[')
		for i, item := range v.Arr {
			if i > 0 {
				b.WriteString(", ")
			}
			writePy(b, item)
		}
		b.WriteByte(']')
	case wire.String:
		writeJSONString(b, v.S)
	case wire.Number:
		b.WriteString(v.S)
	case wire.Bool:
		if v.B {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	default:
		b.WriteString("null")
	}
}

// writeJSONString writes s as json.dumps(s, ensure_ascii=False) does,
// which is how vLLM's engine side writes JSON text.
func writeJSONString(b *strings.Builder, s string) {
	var buf [256]byte
	b.Write(wire.AppendString(buf[:0], s))
}
