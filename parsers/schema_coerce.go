package parsers

import (
	"math"
	"math/big"
	"strings"
	"unicode"

	"github.com/vrender/vrender/internal/pyfmt"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/parsers/pyjson"
	"github.com/vrender/vrender/protocol"
)

// Schema-driven value coercion, as vLLM's tool_parsers/utils.py
// (find_tool_properties, extract_types_from_schema, coerce_to_schema_type)
// applies it to the string values of XML-style tool calls. Values come out
// as the canonical JSON text json.dumps(ensure_ascii=False) writes.

// toolProperties is find_tool_properties: the "properties" of the first
// function tool named name, one schema per key; nil when there are none.
func toolProperties(tools []protocol.Tool, name string) map[string]*wire.Node {
	for _, t := range tools {
		if t.Function.Name != name {
			continue
		}
		return propertiesOf(t.Function.Parameters)
	}
	return nil
}

// propertiesOf is a schema's "properties" object by key, nil when the
// schema or its properties are not an object.
func propertiesOf(schema *wire.Node) map[string]*wire.Node {
	if schema == nil || schema.Kind != wire.Object {
		return nil
	}
	p, ok := schema.Get("properties")
	if !ok || p.Kind != wire.Object {
		return nil
	}
	props := make(map[string]*wire.Node, len(p.Keys))
	for i, k := range p.Keys {
		props[k] = p.Vals[i]
	}
	return props
}

// schemaTypes is extract_types_from_schema for one property schema, nil
// when the schema is not a JSON object (vLLM then skips the key).
func schemaTypes(schema *wire.Node) map[string]bool {
	if schema.Kind != wire.Object {
		return nil
	}
	types := map[string]bool{}
	collectSchemaTypes(schema, types)
	if len(types) == 0 {
		types["string"] = true
	}
	return types
}

// collectSchemaTypes adds the types a schema names: "type" as a string or
// the strings of a list, the kinds of "enum" values, and the types of
// each anyOf, oneOf and allOf choice (a choice that is not an object
// reads as ["string"]).
func collectSchemaTypes(schema *wire.Node, types map[string]bool) {
	if t, ok := schema.Get("type"); ok {
		switch t.Kind {
		case wire.String:
			types[t.S] = true
		case wire.Array:
			for _, m := range t.Arr {
				if m.Kind == wire.String {
					types[m.S] = true
				}
			}
		}
	}
	if e, ok := schema.Get("enum"); ok && e.Kind == wire.Array {
		for _, v := range e.Arr {
			types[enumType(v)] = true
		}
	}
	for _, field := range []string{"anyOf", "oneOf", "allOf"} {
		c, ok := schema.Get(field)
		if !ok || c.Kind != wire.Array {
			continue
		}
		for _, sub := range c.Arr {
			if sub.Kind != wire.Object {
				types["string"] = true
				continue
			}
			inner := map[string]bool{}
			collectSchemaTypes(sub, inner)
			if len(inner) == 0 {
				inner["string"] = true
			}
			for k := range inner {
				types[k] = true
			}
		}
	}
}

// enumType is the JSON-schema type Python infers from an enum value.
func enumType(v *wire.Node) string {
	switch v.Kind {
	case wire.Null:
		return "null"
	case wire.Bool:
		return "boolean"
	case wire.String:
		return "string"
	case wire.Array:
		return "array"
	case wire.Object:
		return "object"
	}
	if v.IsFloat() || v.S == "NaN" || v.S == "Infinity" || v.S == "-Infinity" {
		return "number"
	}
	return "integer"
}

// typeAliases is vLLM's _TYPE_ALIASES.
var typeAliases = map[string]string{
	"str": "string", "text": "string", "varchar": "string", "char": "string", "enum": "string",
	"int": "integer", "int32": "integer", "int64": "integer", "uint": "integer", "uint32": "integer",
	"uint64": "integer", "long": "integer", "short": "integer", "unsigned": "integer",
	"float": "number", "float32": "number", "float64": "number", "double": "number",
	"bool": "boolean", "dict": "object", "arr": "array", "list": "array", "sequence": "array",
}

// coerceCanonical is json.dumps(coerce_to_schema_type(value, types)):
// null > integer > number > boolean > object > array > string, the first
// that succeeds; without "string" among the types a failed coercion falls
// back to json.loads(value), and to the string itself.
func coerceCanonical(value string, types map[string]bool) string {
	norm := map[string]bool{}
	for t := range types {
		k := strings.ToLower(pyStrip(t))
		if a, ok := typeAliases[k]; ok {
			k = a
		}
		norm[k] = true
	}
	if norm["null"] && strings.ToLower(value) == "null" {
		return "null"
	}
	if norm["integer"] {
		if s, ok := coerceInt(value); ok {
			return s
		}
	}
	if norm["number"] {
		if s, ok := coerceNumber(value); ok {
			return s
		}
	}
	if norm["boolean"] {
		switch strings.ToLower(pyStrip(value)) {
		case "true", "1":
			return "true"
		case "false", "0":
			return "false"
		}
	}
	if norm["object"] || norm["array"] {
		if s, ok := finiteJSON(value); ok {
			return s
		}
	}
	if norm["string"] {
		return pyjson.Quote(value)
	}
	if s, ok := finiteJSON(value); ok {
		return s
	}
	return pyjson.Quote(value)
}

// finiteJSON is json.dumps(json.loads(s)) when that is valid JSON without
// NaN or infinities.
func finiteJSON(s string) (string, bool) {
	out, err := pyjson.Canonical(s)
	if err != nil || hasNonFinite(out) {
		return "", false
	}
	return out, true
}

// hasNonFinite reports NaN or Infinity outside strings of canonical JSON.
func hasNonFinite(canon string) bool {
	in, esc := false, false
	for i := 0; i < len(canon); i++ {
		c := canon[i]
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case !in && (c == 'N' || c == 'I'):
			return true
		}
	}
	return false
}

// pyIsSpace is Python's str.isspace for one rune.
func pyIsSpace(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f }

// pyStrip is Python's str.strip().
func pyStrip(s string) string { return strings.TrimFunc(s, pyIsSpace) }

// cleanDigits validates Python's digit-run grammar (underscores only
// between digits) and returns the digits without underscores.
func cleanDigits(s string) (string, bool) {
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' || strings.Contains(s, "__") {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && s[i] != '_' {
			return "", false
		}
	}
	return strings.ReplaceAll(s, "_", ""), true
}

// coerceInt is int(value) for ASCII digits, written as json.dumps writes it.
func coerceInt(value string) (string, bool) {
	s := pyStrip(value)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	d, ok := cleanDigits(s)
	if !ok || len(d) > pyfmt.MaxIntDigits {
		return "", false
	}
	d = strings.TrimLeft(d, "0")
	if d == "" {
		return "0", true
	}
	if neg {
		return "-" + d, true
	}
	return d, true
}

// coerceNumber is vLLM's number coercion: float(value), rejected when not
// finite, written as an int when it has no fraction.
func coerceNumber(value string) (string, bool) {
	s := pyStrip(value)
	sign := ""
	if s != "" && (s[0] == '+' || s[0] == '-') {
		sign, s = s[:1], s[1:]
	}
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, hasDot := strings.Cut(mant, ".")
	var clean strings.Builder
	clean.WriteString(sign)
	if intPart != "" {
		d, ok := cleanDigits(intPart)
		if !ok {
			return "", false
		}
		clean.WriteString(d)
	}
	if hasDot {
		clean.WriteByte('.')
		if frac != "" {
			d, ok := cleanDigits(frac)
			if !ok {
				return "", false
			}
			clean.WriteString(d)
		}
	}
	if intPart == "" && frac == "" {
		return "", false // inf and nan are not finite; nothing else parses
	}
	if hasExp {
		e := exp
		if e != "" && (e[0] == '+' || e[0] == '-') {
			clean.WriteString("e" + e[:1])
			e = e[1:]
		} else {
			clean.WriteByte('e')
		}
		d, ok := cleanDigits(e)
		if !ok {
			return "", false
		}
		clean.WriteString(d)
	}
	f := pyjson.ParseFloat(clean.String())
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return "", false
	}
	if f == math.Trunc(f) {
		i, _ := new(big.Float).SetFloat64(f).Int(nil)
		return i.String(), true
	}
	return string(pyjson.AppendFloat(nil, f)), true
}

// paramJSON is a parameter's value as vLLM's engine writes it into the
// arguments: coerced by the type the tool's schema gives the parameter,
// else (no schema, no type, or not coercible) a JSON string.
func paramJSON(props map[string]*wire.Node, name, raw string) string {
	if schema, ok := props[name]; ok {
		if types := schemaTypes(schema); types != nil {
			if v := coerceCanonical(raw, types); v != "" {
				return v
			}
		}
	}
	return pyjson.Quote(raw)
}
