package render

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
)

// toolChoiceSchema is vLLM's get_json_schema_from_tools, which the tool
// parser's adjust_request turns into structured_outputs.json: a named
// tool_choice constrains the output to that function's parameters, and
// "required" to a non-empty list of {name, parameters} objects, one
// alternative per function tool, with every tool's "$defs" hoisted to the
// top. It returns nil when generation is not constrained. Key order is
// Python's dict order, so the schema the engine gets is byte-identical.
func toolChoiceSchema(req *protocol.ChatCompletionRequest) (json.RawMessage, error) {
	if len(req.Tools) == 0 {
		return nil, nil
	}
	tc := req.ToolChoice
	if tc.Kind == protocol.ToolChoiceNamed {
		for _, t := range req.Tools {
			if t.Function.Name == tc.Name {
				if t.Function.Parameters == nil {
					return nil, nil
				}
				return wire.AppendNode(nil, t.Function.Parameters), nil
			}
		}
		return nil, badRequestf("Tool '%s' has not been passed in `tools`.", tc.Name)
	}
	if tc.Kind != protocol.ToolChoiceRequired {
		return nil, nil
	}
	b := []byte(`{"type":"array","minItems":1,"items":{"type":"object","anyOf":[`)
	var defs []protocol.Member
	for i, t := range req.Tools {
		var kept []protocol.Member
		if p := t.Function.Parameters; p != nil {
			for j, k := range p.Keys {
				if k != "$defs" {
					kept = append(kept, protocol.Member{Key: k, Value: p.Vals[j]})
					continue
				}
				d := p.Vals[j]
				if d.Kind != wire.Object {
					continue // not an object: no defs
				}
				for l, name := range d.Keys {
					if prev := findMember(defs, name); prev != nil {
						if !pyEqualJSON(prev, d.Vals[l]) {
							return nil, badRequestf("Tool definition '%s' has multiple schemas, which is not supported.", name)
						}
						continue
					}
					defs = append(defs, protocol.Member{Key: name, Value: d.Vals[l]})
				}
			}
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"properties":{"name":{"type":"string","enum":[`...)
		b = wire.AppendString(b, t.Function.Name)
		b = append(b, `]},"parameters":`...)
		if len(kept) == 0 {
			b = append(b, `{"type":"object","properties":{}}`...)
		} else {
			b = appendObject(b, kept)
		}
		b = append(b, `},"required":["name","parameters"]}`...)
	}
	b = append(b, "]}"...)
	if len(defs) > 0 {
		b = append(b, `,"$defs":`...)
		b = appendObject(b, defs)
	}
	return append(b, '}'), nil
}

// appendObject writes members compactly, each value as the request gave
// it.
func appendObject(b []byte, ms []protocol.Member) []byte {
	b = append(b, '{')
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(wire.AppendString(b, m.Key), ':')
		b = wire.AppendNode(b, m.Value)
	}
	return append(b, '}')
}

func findMember(ms []protocol.Member, key string) *wire.Node {
	for _, m := range ms {
		if m.Key == key {
			return m.Value
		}
	}
	return nil
}

// pyEqualJSON is Python's == between the values json.loads makes of a and
// b: dicts equal whatever their key order, and numbers (bools among them)
// compared by value across int and float, exactly.
func pyEqualJSON(a, b *wire.Node) bool {
	if an, ok := jsonNumberValue(a); ok {
		bn, ok := jsonNumberValue(b)
		return ok && an != nil && bn != nil && an.Cmp(bn) == 0
	}
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case wire.Null:
		return true
	case wire.String:
		return a.S == b.S
	case wire.Array:
		if len(a.Arr) != len(b.Arr) {
			return false
		}
		for i := range a.Arr {
			if !pyEqualJSON(a.Arr[i], b.Arr[i]) {
				return false
			}
		}
		return true
	case wire.Object:
		if len(a.Keys) != len(b.Keys) {
			return false
		}
		for i, k := range a.Keys {
			v, ok := b.Get(k)
			if !ok || !pyEqualJSON(a.Vals[i], v) {
				return false
			}
		}
		return true
	}
	return false
}

// jsonNumberValue is a bool or number as an exact value, ok false for other
// kinds; nil (with ok) for NaN, which equals nothing. Infinities compare
// as the largest finite magnitudes past any float, which only they reach.
func jsonNumberValue(n *wire.Node) (*big.Rat, bool) {
	switch n.Kind {
	case wire.Bool:
		if n.B {
			return big.NewRat(1, 1), true
		}
		return new(big.Rat), true
	case wire.Number:
	default:
		return nil, false
	}
	if !n.IsFloat() && n.S != "NaN" && n.S != "Infinity" && n.S != "-Infinity" {
		r, ok := new(big.Rat).SetString(n.S)
		return r, ok
	}
	f, _ := strconv.ParseFloat(n.S, 64) // NaN and ±Infinity parse too; out of range is ±Inf
	switch {
	case math.IsNaN(f):
		return nil, true
	case math.IsInf(f, 0):
		// Beyond every finite float (and every int a request can hold).
		huge := new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), 1<<20))
		if f < 0 {
			huge.Neg(huge)
		}
		return huge, true
	}
	return new(big.Rat).SetFloat64(f), true
}

func badRequestf(format string, args ...any) *BadRequestError {
	return &BadRequestError{Message: fmt.Sprintf(format, args...)}
}
