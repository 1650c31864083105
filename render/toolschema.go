package render

import (
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
// top. It returns nil when generation is not constrained. The schema is a
// tree over the request's own trees, its keys in Python's dict order, so
// the schema the engine gets is byte-identical.
func toolChoiceSchema(req *protocol.ChatCompletionRequest) (*node, error) {
	if len(req.Tools) == 0 {
		return nil, nil
	}
	tc := req.ToolChoice
	if tc.Kind == protocol.ToolChoiceNamed {
		for _, t := range req.Tools {
			if t.Function.Name == tc.Name {
				return t.Function.Parameters, nil
			}
		}
		return nil, badRequestf("Tool '%s' has not been passed in `tools`.", tc.Name)
	}
	if tc.Kind != protocol.ToolChoiceRequired {
		return nil, nil
	}
	anyOf := &node{Kind: jArr, Arr: make([]*node, 0, len(req.Tools))}
	defs := &node{Kind: jObj}
	for _, t := range req.Tools {
		params := &node{Kind: jObj}
		if p := t.Function.Parameters; p != nil {
			for j, k := range p.Keys {
				if k != "$defs" {
					params.Keys, params.Vals = append(params.Keys, k), append(params.Vals, p.Vals[j])
					continue
				}
				d := p.Vals[j]
				if d.Kind != jObj {
					continue // not an object: no defs
				}
				for l, name := range d.Keys {
					if prev, ok := defs.Get(name); ok {
						if !pyEqualJSON(prev, d.Vals[l]) {
							return nil, badRequestf("Tool definition '%s' has multiple schemas, which is not supported.", name)
						}
						continue
					}
					defs.Keys, defs.Vals = append(defs.Keys, name), append(defs.Vals, d.Vals[l])
				}
			}
		}
		if len(params.Keys) == 0 {
			params = objNode(0, objMember{"type", strNode("object")}, objMember{"properties", &node{Kind: jObj}})
		}
		name := objNode(0, objMember{"type", strNode("string")},
			objMember{"enum", &node{Kind: jArr, Arr: []*node{strNode(t.Function.Name)}}})
		anyOf.Arr = append(anyOf.Arr, objNode(0,
			objMember{"properties", objNode(0, objMember{"name", name}, objMember{"parameters", params})},
			objMember{"required", &node{Kind: jArr, Arr: []*node{strNode("name"), strNode("parameters")}}}))
	}
	schema := objNode(1, objMember{"type", strNode("array")}, objMember{"minItems", &node{Kind: jNum, S: "1"}},
		objMember{"items", objNode(0, objMember{"type", strNode("object")}, objMember{"anyOf", anyOf})})
	if len(defs.Keys) > 0 {
		schema.Keys, schema.Vals = append(schema.Keys, "$defs"), append(schema.Vals, defs)
	}
	return schema, nil
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
