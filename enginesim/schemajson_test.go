package enginesim

import (
	"strconv"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/wire"
)

// dumpRef writes the reference tree with Python's dict rule for repeated
// keys applied (first position, last value), which the wire tree keeps
// and the encoding/json token stream did not.
func dumpRef(b *strings.Builder, v *refJSONValue) {
	switch v.kind {
	case 'o':
		var keys []string
		last := map[string]*refJSONValue{}
		for i, k := range v.keys {
			if _, ok := last[k]; !ok {
				keys = append(keys, k)
			}
			last[k] = v.vals[i]
		}
		b.WriteByte('{')
		for _, k := range keys {
			b.WriteString(strconv.Quote(k) + ":")
			dumpRef(b, last[k])
			b.WriteByte(',')
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for _, item := range v.items {
			dumpRef(b, item)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case 's':
		b.WriteString(strconv.Quote(v.str))
	case 'n':
		b.WriteString("#" + v.str)
	case 'b':
		b.WriteString(strconv.FormatBool(v.b))
	default:
		b.WriteString("null")
	}
}

func dumpNode(b *strings.Builder, v *wire.Node) {
	switch v.Kind {
	case wire.Object:
		b.WriteByte('{')
		for i, k := range v.Keys {
			b.WriteString(strconv.Quote(k) + ":")
			dumpNode(b, v.Vals[i])
			b.WriteByte(',')
		}
		b.WriteByte('}')
	case wire.Array:
		b.WriteByte('[')
		for _, item := range v.Arr {
			dumpNode(b, item)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case wire.String:
		b.WriteString(strconv.Quote(v.S))
	case wire.Number:
		b.WriteString("#" + v.S)
	case wire.Bool:
		b.WriteString(strconv.FormatBool(v.B))
	default:
		b.WriteString("null")
	}
}

// checkParseMatchesRef fails unless parseJSONValue accepts what the
// encoding/json reader it replaced accepted, with the same tree.
func checkParseMatchesRef(t *testing.T, data []byte) {
	t.Helper()
	ref, refErr := refParseJSONValue(data)
	got, err := parseJSONValue(data)
	if (err == nil) != (refErr == nil) {
		t.Fatalf("%q: err %v, reference %v", data, err, refErr)
	}
	if err != nil {
		return
	}
	var g, w strings.Builder
	dumpNode(&g, got)
	dumpRef(&w, ref)
	if g.String() != w.String() {
		t.Fatalf("%q:\n got %s\nwant %s", data, g.String(), w.String())
	}
	var gp strings.Builder
	writePy(&gp, got)
	if _, err := parseJSONValue([]byte(gp.String())); err != nil {
		t.Fatalf("%q: writePy wrote %s, which does not parse: %v", data, gp.String(), err)
	}
}

var schemaSeeds = []string{
	`{"type":"object","properties":{"b":{"type":"integer","minimum":3},"a":{"type":"string","format":"date"}},"required":["a","c"]}`,
	`{"$defs":{"x":{"type":"boolean"}},"properties":{"p":{"$ref":"#/$defs/x"}},"allOf":[{"properties":{"q":{"enum":[1.5e3,"y"]}}}]}`,
	`{"a":1,"a":{"b":2,"b":3},"c":[{"d":1,"d":null}]}`, `["\u00e9\ud83d\ude00\ud800", "\n\t\"", -0, 1E+2, true, false, null]`,
	"\"a\xffb\"", `{"a" 1}`, `[1,]`, `{} {}`, `{} x`, ``, ` `, `01`, `[1e]`, `NaN`, `{"a":[1 2]}`, `"\q"`,
	strings.Repeat("[", 128) + strings.Repeat("]", 128), strings.Repeat("[", 129) + strings.Repeat("]", 129),
	strings.Repeat(`{"a":`, 129) + "1" + strings.Repeat("}", 129),
}

func TestParseJSONValueMatchesRef(t *testing.T) {
	for _, s := range schemaSeeds {
		checkParseMatchesRef(t, []byte(s))
	}
}

func FuzzParseJSONValueMatchesRef(f *testing.F) {
	for _, s := range schemaSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkParseMatchesRef)
}

// TestRepeatedSchemaKeys: a repeated key counts once, with its last
// value, as in the dict the engine side would build.
func TestRepeatedSchemaKeys(t *testing.T) {
	schema, err := parseJSONValue([]byte(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"boolean"},"a":{"type":"integer","minimum":7,"maximum":7}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := jsonForSchema(schema), `{"a": 7, "b": true}`; got != want {
		t.Errorf("jsonForSchema = %s, want %s", got, want)
	}
}
