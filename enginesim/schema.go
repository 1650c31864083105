package enginesim

import (
	"math"
	"strconv"
	"strings"
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
	root *jsonValue
	b    strings.Builder
}

const maxSchemaDepth = 24

// maxSchemaBytes bounds the document: nested minItems multiply (four
// levels of 64 are 16M values, 2.5 GB), and a real model would have hit
// its max_tokens long before. Past it the writer stops where it is and the
// answer ends unfinished, as a length-limited generation does.
const maxSchemaBytes = 1 << 20

// jsonForSchema returns a JSON document satisfying schema.
func jsonForSchema(schema *jsonValue) string {
	w := &schemaWriter{root: schema}
	w.write(schema, "", 0)
	return w.b.String()
}

func (w *schemaWriter) write(s *jsonValue, name string, depth int) {
	if w.b.Len() >= maxSchemaBytes {
		return
	}
	if depth > maxSchemaDepth || s == nil || s.kind != 'o' {
		if s != nil && s.kind == 'b' && !s.b {
			w.b.WriteString("null") // false admits nothing; null is as good as anything
			return
		}
		w.sampleString(nil, name)
		return
	}
	if ref := s.get("$ref"); ref != nil && ref.kind == 's' {
		if target := w.resolve(ref.str); target != nil {
			w.write(target.merged(s.without("$ref")), name, depth+1)
			return
		}
	}
	if c := s.get("const"); c != nil {
		c.writePy(&w.b)
		return
	}
	if e := s.get("enum"); e != nil && e.kind == 'a' && len(e.items) > 0 {
		e.items[0].writePy(&w.b)
		return
	}
	if all := s.get("allOf"); all != nil && all.kind == 'a' {
		merged := s.without("allOf")
		for _, part := range all.items {
			merged = merged.merged(part)
		}
		w.write(merged, name, depth+1)
		return
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if alts := s.get(key); alts != nil && alts.kind == 'a' && len(alts.items) > 0 {
			w.write(s.without(key).merged(firstNonNull(alts.items)), name, depth+1)
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
func (w *schemaWriter) resolve(ref string) *jsonValue {
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
		cur = cur.get(part)
		if cur == nil {
			return nil
		}
	}
	return cur
}

func firstNonNull(alts []*jsonValue) *jsonValue {
	for _, a := range alts {
		if t := a.get("type"); t == nil || t.kind != 's' || t.str != "null" {
			return a
		}
	}
	return alts[0]
}

// schemaType is the schema's type, the first non-null one of a list, or
// one inferred from the keywords present.
func schemaType(s *jsonValue) string {
	if t := s.get("type"); t != nil {
		switch t.kind {
		case 's':
			return t.str
		case 'a':
			for _, item := range t.items {
				if item.kind == 's' && item.str != "null" {
					return item.str
				}
			}
			return "null"
		}
	}
	switch {
	case s.get("properties") != nil || s.get("required") != nil:
		return "object"
	case s.get("items") != nil || s.get("prefixItems") != nil:
		return "array"
	}
	return ""
}

func (w *schemaWriter) object(s *jsonValue, depth int) {
	w.b.WriteByte('{')
	n := 0
	props := s.get("properties")
	if props != nil && props.kind == 'o' {
		for i, key := range props.keys {
			if w.b.Len() >= maxSchemaBytes {
				return
			}
			w.member(n, key, props.vals[i], depth)
			n++
		}
	}
	// Required names without a declared schema still have to appear.
	if req := s.get("required"); req != nil && req.kind == 'a' {
		for _, r := range req.items {
			if r.kind == 's' && props.get(r.str) == nil {
				w.member(n, r.str, nil, depth)
				n++
			}
		}
	}
	w.b.WriteByte('}')
}

func (w *schemaWriter) member(n int, key string, s *jsonValue, depth int) {
	if n > 0 {
		w.b.WriteString(", ")
	}
	writeJSONString(&w.b, key)
	w.b.WriteString(": ")
	w.write(s, key, depth+1)
}

func (w *schemaWriter) array(s *jsonValue, name string, depth int) {
	count := 1
	if v, ok := s.number("minItems"); ok && int(v) > count {
		count = int(v)
	}
	if v, ok := s.number("maxItems"); ok && int(v) < count {
		count = int(v)
	}
	count = min(count, 64)
	prefix := s.get("prefixItems")
	items := s.get("items")
	w.b.WriteByte('[')
	for i := range count {
		if w.b.Len() >= maxSchemaBytes {
			return
		}
		if i > 0 {
			w.b.WriteString(", ")
		}
		if prefix != nil && prefix.kind == 'a' && i < len(prefix.items) {
			w.write(prefix.items[i], name, depth+1)
			continue
		}
		w.write(items, name, depth+1)
	}
	w.b.WriteByte(']')
}

// bounds returns the inclusive range a number must fall in.
func bounds(s *jsonValue, step float64) (lo, hi float64) {
	lo, hi = math.Inf(-1), math.Inf(1)
	if v, ok := s.number("minimum"); ok {
		lo = v
	}
	if v, ok := s.number("exclusiveMinimum"); ok {
		lo = math.Max(lo, v+step)
	}
	if v, ok := s.number("maximum"); ok {
		hi = v
	}
	if v, ok := s.number("exclusiveMaximum"); ok {
		hi = math.Min(hi, v-step)
	}
	return lo, hi
}

func (w *schemaWriter) integer(s *jsonValue) {
	lo, hi := bounds(s, 1)
	v := math.Max(1, math.Ceil(lo))
	if v > hi {
		v = math.Floor(hi)
	}
	w.b.WriteString(strconv.FormatInt(int64(v), 10))
}

func (w *schemaWriter) number(s *jsonValue) {
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
func (w *schemaWriter) sampleString(s *jsonValue, name string) {
	v := "example"
	if f := s.get("format"); f != nil && f.kind == 's' {
		switch f.str {
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
	if n, ok := s.number("minLength"); ok {
		for len([]rune(v)) < int(n) {
			v += "x"
		}
	}
	if n, ok := s.number("maxLength"); ok && len([]rune(v)) > int(n) {
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
