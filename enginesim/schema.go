package enginesim

import (
	"math"
	"strconv"
	"strings"

	"github.com/vrender/vrender/internal/wire"
)

// schemaWriter writes a JSON value that satisfies a JSON schema, as a
// model constrained by structured outputs would. It covers what tool
// parameter schemas and response_format schemas use: objects (every
// declared property, in order), arrays (minItems/maxItems, prefixItems),
// strings (enum, const, formats, length bounds), numbers and integers
// (bounds), booleans, null, $ref into $defs/definitions, anyOf/oneOf (the
// first non-null branch, merged with sibling keywords) and allOf.
// "pattern" is not honoured.
type schemaWriter struct {
	root *wire.Node
	b    strings.Builder
}

const maxSchemaDepth = 24

// maxSchemaBytes bounds the document: nested minItems multiply (four
// levels of 64 are 16M values, 2.5 GB), and a real model would have hit
// its max_tokens long before. Past it the writer stops where it is and the
// answer ends unfinished, as a length-limited generation does.
const maxSchemaBytes = 1 << 20

// jsonForSchema returns a JSON document satisfying schema.
func jsonForSchema(schema *wire.Node) string {
	w := &schemaWriter{root: schema}
	w.write(schema, "", 0)
	return w.b.String()
}

func (w *schemaWriter) write(s *wire.Node, name string, depth int) {
	if w.b.Len() >= maxSchemaBytes {
		return
	}
	if depth > maxSchemaDepth || s == nil || s.Kind != wire.Object {
		if s != nil && s.Kind == wire.Bool && !s.B {
			w.b.WriteString("null") // false admits nothing; null is as good as anything
			return
		}
		w.sampleString(nil, name)
		return
	}
	if ref := member(s, "$ref"); ref != nil && ref.Kind == wire.String {
		if target := w.resolve(ref.S); target != nil {
			w.write(mergedSchema(target, withoutKeys(s, "$ref")), name, depth+1)
			return
		}
	}
	if c := member(s, "const"); c != nil {
		writePy(&w.b, c)
		return
	}
	if e := member(s, "enum"); e != nil && e.Kind == wire.Array && len(e.Arr) > 0 {
		writePy(&w.b, e.Arr[0])
		return
	}
	if all := member(s, "allOf"); all != nil && all.Kind == wire.Array {
		merged := withoutKeys(s, "allOf")
		for _, part := range all.Arr {
			merged = mergedSchema(merged, part)
		}
		w.write(merged, name, depth+1)
		return
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if alts := member(s, key); alts != nil && alts.Kind == wire.Array && len(alts.Arr) > 0 {
			w.write(mergedSchema(withoutKeys(s, key), firstNonNull(alts.Arr)), name, depth+1)
			return
		}
	}
	switch schemaType(s) {
	case "object":
		w.object(s, depth)
	case "array":
		w.array(s, name, depth)
	case "integer":
		w.integer(s)
	case "number":
		w.number(s)
	case "boolean":
		w.b.WriteString("true")
	case "null":
		w.b.WriteString("null")
	default:
		w.sampleString(s, name)
	}
}

// resolve follows a local reference such as "#/$defs/Item".
func (w *schemaWriter) resolve(ref string) *wire.Node {
	path, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	cur := w.root
	for _, part := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		if part == "" {
			continue
		}
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		cur = member(cur, part)
		if cur == nil {
			return nil
		}
	}
	return cur
}

func firstNonNull(alts []*wire.Node) *wire.Node {
	for _, a := range alts {
		if t := member(a, "type"); t == nil || t.Kind != wire.String || t.S != "null" {
			return a
		}
	}
	return alts[0]
}

// schemaType is the schema's type, the first non-null one of a list, or
// one inferred from the keywords present.
func schemaType(s *wire.Node) string {
	if t := member(s, "type"); t != nil {
		switch t.Kind {
		case wire.String:
			return t.S
		case wire.Array:
			for _, item := range t.Arr {
				if item.Kind == wire.String && item.S != "null" {
					return item.S
				}
			}
			return "null"
		}
	}
	switch {
	case member(s, "properties") != nil || member(s, "required") != nil:
		return "object"
	case member(s, "items") != nil || member(s, "prefixItems") != nil:
		return "array"
	}
	return ""
}

func (w *schemaWriter) object(s *wire.Node, depth int) {
	w.b.WriteByte('{')
	n := 0
	props := member(s, "properties")
	if props != nil && props.Kind == wire.Object {
		for i, key := range props.Keys {
			if w.b.Len() >= maxSchemaBytes {
				return
			}
			w.member(n, key, props.Vals[i], depth)
			n++
		}
	}
	// Required names without a declared schema still have to appear.
	if req := member(s, "required"); req != nil && req.Kind == wire.Array {
		for _, r := range req.Arr {
			if r.Kind == wire.String && member(props, r.S) == nil {
				w.member(n, r.S, nil, depth)
				n++
			}
		}
	}
	w.b.WriteByte('}')
}

func (w *schemaWriter) member(n int, key string, s *wire.Node, depth int) {
	if n > 0 {
		w.b.WriteString(", ")
	}
	writeJSONString(&w.b, key)
	w.b.WriteString(": ")
	w.write(s, key, depth+1)
}

func (w *schemaWriter) array(s *wire.Node, name string, depth int) {
	count := 1
	if v, ok := numberMember(s, "minItems"); ok && int(v) > count {
		count = int(v)
	}
	if v, ok := numberMember(s, "maxItems"); ok && int(v) < count {
		count = int(v)
	}
	count = min(count, 64)
	prefix := member(s, "prefixItems")
	items := member(s, "items")
	w.b.WriteByte('[')
	for i := range count {
		if w.b.Len() >= maxSchemaBytes {
			return
		}
		if i > 0 {
			w.b.WriteString(", ")
		}
		if prefix != nil && prefix.Kind == wire.Array && i < len(prefix.Arr) {
			w.write(prefix.Arr[i], name, depth+1)
			continue
		}
		w.write(items, name, depth+1)
	}
	w.b.WriteByte(']')
}

// bounds returns the inclusive range a number must fall in.
func bounds(s *wire.Node, step float64) (lo, hi float64) {
	lo, hi = math.Inf(-1), math.Inf(1)
	if v, ok := numberMember(s, "minimum"); ok {
		lo = v
	}
	if v, ok := numberMember(s, "exclusiveMinimum"); ok {
		lo = math.Max(lo, v+step)
	}
	if v, ok := numberMember(s, "maximum"); ok {
		hi = v
	}
	if v, ok := numberMember(s, "exclusiveMaximum"); ok {
		hi = math.Min(hi, v-step)
	}
	return lo, hi
}

func (w *schemaWriter) integer(s *wire.Node) {
	lo, hi := bounds(s, 1)
	v := math.Max(1, math.Ceil(lo))
	if v > hi {
		v = math.Floor(hi)
	}
	w.b.WriteString(strconv.FormatInt(int64(v), 10))
}

func (w *schemaWriter) number(s *wire.Node) {
	lo, hi := bounds(s, 0.5)
	v := 1.5
	switch {
	case v < lo:
		v = lo
	case v > hi:
		v = hi
	}
	f := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(f, ".eE") {
		f += ".0"
	}
	w.b.WriteString(f)
}

// sampleString writes a plausible string for a property name, honouring
// format and length bounds.
func (w *schemaWriter) sampleString(s *wire.Node, name string) {
	v := "example"
	if f := member(s, "format"); f != nil && f.Kind == wire.String {
		switch f.S {
		case "date":
			v = "2024-01-01"
		case "date-time":
			v = "2024-01-01T00:00:00Z"
		case "time":
			v = "12:00:00"
		case "email":
			v = "user@example.com"
		case "uri", "url":
			v = "https://example.com"
		case "uuid":
			v = "123e4567-e89b-12d3-a456-426614174000"
		}
	} else if hint, ok := stringHints[strings.ToLower(name)]; ok {
		v = hint
	}
	if n, ok := numberMember(s, "minLength"); ok {
		for len([]rune(v)) < int(n) {
			v += "x"
		}
	}
	if n, ok := numberMember(s, "maxLength"); ok && len([]rune(v)) > int(n) {
		v = string([]rune(v)[:max(int(n), 0)])
	}
	writeJSONString(&w.b, v)
}

// stringHints make generated arguments read naturally for common names.
var stringHints = map[string]string{
	"city":     "Paris",
	"location": "Paris, France",
	"country":  "France",
	"query":    "example query",
	"q":        "example query",
	"name":     "example",
	"unit":     "celsius",
	"language": "en",
	"timezone": "Europe/Paris",
}
