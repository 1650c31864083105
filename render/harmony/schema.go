package harmony

import (
	"fmt"
	"strings"

	"github.com/vrender/vrender/internal/wire"
)

// value is a JSON value that keeps object key order, because openai_harmony
// (serde_json with preserve_order) renders properties in the order given.
type value struct {
	kind byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	keys []string
	vals []*value
	str  string // string contents, or the literal for numbers and bools
}

// schemaValue is a tool's parameters, decoded by protocol (wire.Parse: a
// repeated key keeps its first position and its last value, as
// serde_json's IndexMap does), as an order-preserving tree.
func schemaValue(n *wire.Node) (*value, error) {
	if n.Depth > maxDepth {
		return nil, fmt.Errorf("harmony: tool parameters: nested deeper than %d levels", maxDepth)
	}
	return fromNode(n), nil
}

// maxDepth bounds nesting so a hostile schema cannot exhaust the stack.
const maxDepth = 512

func fromNode(n *wire.Node) *value {
	switch n.Kind {
	case wire.Object:
		v := &value{kind: 'o', keys: n.Keys, vals: make([]*value, len(n.Vals))}
		for i, c := range n.Vals {
			v.vals[i] = fromNode(c)
		}
		return v
	case wire.Array:
		v := &value{kind: 'a', vals: make([]*value, len(n.Arr))}
		for i, c := range n.Arr {
			v.vals[i] = fromNode(c)
		}
		return v
	case wire.String:
		return &value{kind: 's', str: n.S}
	case wire.Number:
		return &value{kind: 'n', str: n.S}
	case wire.Bool:
		if n.B {
			return &value{kind: 'b', str: "true"}
		}
		return &value{kind: 'b', str: "false"}
	}
	return &value{kind: 'z', str: "null"}
}

func (v *value) index(k string) int {
	for i, key := range v.keys {
		if key == k {
			return i
		}
	}
	return -1
}

func (v *value) get(k string) *value {
	if v == nil || v.kind != 'o' {
		return nil
	}
	if i := v.index(k); i >= 0 {
		return v.vals[i]
	}
	return nil
}

func (v *value) asString() (string, bool) {
	if v == nil || v.kind != 's' {
		return "", false
	}
	return v.str, true
}

// compact writes v as serde_json's Display does: compact JSON.
func (v *value) compact(b *strings.Builder) {
	switch v.kind {
	case 'o':
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, k)
			b.WriteByte(':')
			v.vals[i].compact(b)
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for i, c := range v.vals {
			if i > 0 {
				b.WriteByte(',')
			}
			c.compact(b)
		}
		b.WriteByte(']')
	case 's':
		writeJSONString(b, v.str)
	default:
		b.WriteString(v.str)
	}
}

func (v *value) String() string {
	var b strings.Builder
	v.compact(&b)
	return b.String()
}

// writeJSONString writes s as serde_json does, which escapes what
// json.dumps(ensure_ascii=False) escapes (package wire): '"', '\\' and the
// controls, and leaves <, >, & and U+2028/U+2029 raw.
func writeJSONString(b *strings.Builder, s string) {
	var buf [256]byte
	b.Write(wire.AppendString(buf[:0], s))
}

func isEnum(s *value) bool {
	e := s.get("enum")
	return e != nil && e.kind == 'a' && len(e.vals) > 0
}

func nullable(s *value) bool {
	n := s.get("nullable")
	return n != nil && n.kind == 'b' && n.str == "true"
}

// defaultText is how openai_harmony writes a default after "default: ".
func defaultText(s, def *value) string {
	if def.kind == 's' {
		if !isEnum(s) {
			return `"` + def.str + `"`
		}
		return def.str
	}
	return def.String()
}

// toTypeScript is openai_harmony's json_schema_to_typescript, branch for branch.
func toTypeScript(schema *value, indent string) string {
	if oneOf := schema.get("oneOf"); oneOf != nil && oneOf.kind == 'a' {
		var out strings.Builder
		for _, variant := range oneOf.vals {
			out.WriteString("\n" + indent + " | ")
			ts := toTypeScript(variant, indent+"   ")
			if nullable(variant) && !strings.Contains(ts, "null") {
				ts += " | null"
			}
			out.WriteString(ts)
			var trailing []string
			if d, ok := variant.get("description").asString(); ok {
				trailing = append(trailing, d)
			}
			if def := variant.get("default"); def != nil {
				if def.kind == 's' && !isEnum(variant) {
					trailing = append(trailing, `default: "`+def.str+`"`)
				} else {
					trailing = append(trailing, "default: "+def.String())
				}
			}
			if len(trailing) > 0 {
				out.WriteString(" // " + strings.Join(trailing, " "))
			}
		}
		return out.String()
	}
	typ := schema.get("type")
	if typ != nil && typ.kind == 'a' {
		var names []string
		for _, t := range typ.vals {
			if s, ok := t.asString(); ok {
				if s == "integer" {
					s = "number"
				}
				names = append(names, s)
			}
		}
		if len(names) > 0 {
			return strings.Join(names, " | ")
		}
	}
	ty, ok := typ.asString()
	if !ok {
		return "any"
	}
	switch ty {
	case "object":
		return objectToTypeScript(schema, indent)
	case "string":
		if e := schema.get("enum"); e != nil && e.kind == 'a' {
			var alts []string
			for _, v := range e.vals {
				if s, ok := v.asString(); ok {
					alts = append(alts, `"`+s+`"`)
				}
			}
			if len(alts) > 0 {
				return strings.Join(alts, " | ")
			}
		}
		return "string"
	case "number", "integer":
		return "number"
	case "boolean":
		return "boolean"
	case "array":
		if items := schema.get("items"); items != nil {
			return toTypeScript(items, indent) + "[]"
		}
		return "Array<any>"
	}
	return "any"
}

func objectToTypeScript(schema *value, indent string) string {
	var out strings.Builder
	if d, ok := schema.get("description").asString(); ok {
		out.WriteString(indent + "// " + d + "\n")
	}
	out.WriteString("{\n")
	props := schema.get("properties")
	if props != nil && props.kind == 'o' {
		required := map[string]bool{}
		if req := schema.get("required"); req != nil && req.kind == 'a' {
			for _, r := range req.vals {
				if s, ok := r.asString(); ok {
					required[s] = true
				}
			}
		}
		for i, key := range props.keys {
			val := props.vals[i]
			opt := "?"
			if required[key] {
				opt = ""
			}
			if t, ok := val.get("title").asString(); ok {
				out.WriteString(indent + "// " + t + "\n" + indent + "//\n")
			}
			oneOf := val.get("oneOf")
			if oneOf == nil {
				if d, ok := val.get("description").asString(); ok {
					out.WriteString(indent + "// " + d + "\n")
				}
			}
			if ex := val.get("examples"); ex != nil && ex.kind == 'a' && len(ex.vals) > 0 {
				out.WriteString(indent + "// Examples:\n")
				for _, e := range ex.vals {
					if s, ok := e.asString(); ok {
						out.WriteString(indent + "// - \"" + s + "\"\n")
					}
				}
			}
			if oneOf != nil && oneOf.kind == 'a' {
				writeOneOfProperty(&out, key, opt, val, oneOf, indent)
				continue
			}
			out.WriteString(indent + key + opt + ": ")
			ts := toTypeScript(val, indent+"    ")
			if nullable(val) && !strings.Contains(ts, "null") {
				ts += " | null"
			}
			out.WriteString(ts + ",")
			if oneOf == nil {
				if def := val.get("default"); def != nil {
					out.WriteString(" // default: " + defaultText(val, def))
				}
			}
			out.WriteByte('\n')
		}
	}
	out.WriteString(indent + "}")
	return out.String()
}

func writeOneOfProperty(out *strings.Builder, key, opt string, val, oneOf *value, indent string) {
	propDesc, hasDesc := val.get("description").asString()
	skip := false
	if hasDesc && len(oneOf.vals) > 0 {
		if vd, ok := oneOf.vals[0].get("description").asString(); ok && vd == propDesc {
			skip = true
		}
	}
	above := false
	if hasDesc && !skip {
		out.WriteString(indent + "// " + propDesc + "\n")
		above = true
	}
	if def := val.get("default"); def != nil {
		out.WriteString(indent + "// default: " + defaultText(val, def) + "\n")
	}
	out.WriteString(indent + key + opt + ":\n")
	for i, variant := range oneOf.vals {
		out.WriteString(indent + " | ")
		ts := toTypeScript(variant, indent+"   ")
		if nullable(variant) && !strings.Contains(ts, "null") {
			ts += " | null"
		}
		out.WriteString(ts)
		var trailing []string
		if !(i == 0 && above) {
			if d, ok := variant.get("description").asString(); ok && !(hasDesc && d == propDesc) {
				trailing = append(trailing, d)
			}
		}
		if def := variant.get("default"); def != nil {
			trailing = append(trailing, "default: "+defaultText(variant, def))
		}
		if len(trailing) > 0 {
			out.WriteString(" // " + strings.Join(trailing, " "))
		}
		out.WriteByte('\n')
	}
	out.WriteString(indent + ",\n")
}
