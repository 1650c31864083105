package enginesim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/vrender/vrender/internal/wire"
)

// jsonValue is a parsed JSON value that keeps object key order: schemas
// are walked property by property, and the JSON written from them must
// list properties in the order the schema declares them.
type jsonValue struct {
	kind  byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	keys  []string
	vals  []*jsonValue
	items []*jsonValue
	str   string // string value, or a number's literal
	b     bool
}

// parseJSONValue parses one JSON document.
func parseJSONValue(data []byte) (*jsonValue, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := readJSONValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after JSON value")
	}
	return v, nil
}

const maxJSONDepth = 128

func readJSONValue(dec *json.Decoder, depth int) (*jsonValue, error) {
	if depth > maxJSONDepth {
		return nil, errors.New("JSON nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			v := &jsonValue{kind: 'o'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key %v is not a string", kt)
				}
				val, err := readJSONValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				v.keys = append(v.keys, key)
				v.vals = append(v.vals, val)
			}
			_, err := dec.Token() // '}'
			return v, err
		case '[':
			v := &jsonValue{kind: 'a'}
			for dec.More() {
				item, err := readJSONValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				v.items = append(v.items, item)
			}
			_, err := dec.Token() // ']'
			return v, err
		}
		return nil, fmt.Errorf("unexpected delimiter %v", t)
	case string:
		return &jsonValue{kind: 's', str: t}, nil
	case json.Number:
		return &jsonValue{kind: 'n', str: t.String()}, nil
	case bool:
		return &jsonValue{kind: 'b', b: t}, nil
	case nil:
		return &jsonValue{kind: 'z'}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// get returns an object member, or nil.
func (v *jsonValue) get(key string) *jsonValue {
	if v == nil || v.kind != 'o' {
		return nil
	}
	for i, k := range v.keys {
		if k == key {
			return v.vals[i]
		}
	}
	return nil
}

// without returns a copy of an object minus some keys.
func (v *jsonValue) without(drop ...string) *jsonValue {
	out := &jsonValue{kind: 'o'}
	for i, k := range v.keys {
		skip := false
		for _, d := range drop {
			skip = skip || k == d
		}
		if !skip {
			out.keys = append(out.keys, k)
			out.vals = append(out.vals, v.vals[i])
		}
	}
	return out
}

// merged returns an object with other's members over v's, except that
// "properties" objects are united and "required" lists concatenated, as
// combining two schemas (allOf, a $ref with siblings) needs.
func (v *jsonValue) merged(other *jsonValue) *jsonValue {
	if other == nil || other.kind != 'o' {
		return v
	}
	out := v.without(other.keys...)
	for i, k := range other.keys {
		val := other.vals[i]
		if mine := v.get(k); mine != nil && mine.kind == val.kind {
			switch {
			case k == "properties" && val.kind == 'o':
				val = mine.merged(val)
			case k == "required" && val.kind == 'a':
				val = &jsonValue{kind: 'a', items: append(append([]*jsonValue{}, mine.items...), val.items...)}
			}
		}
		out.keys = append(out.keys, k)
		out.vals = append(out.vals, val)
	}
	return out
}

// number returns a number member as float64.
func (v *jsonValue) number(key string) (float64, bool) {
	m := v.get(key)
	if m == nil || m.kind != 'n' {
		return 0, false
	}
	var f float64
	if _, err := fmt.Sscan(m.str, &f); err != nil {
		return 0, false
	}
	return f, true
}

// writePy writes v the way Python's json.dumps does by default
// (", " and ": " separators), which is how models print JSON.
func (v *jsonValue) writePy(b *strings.Builder) {
	switch v.kind {
	case 'o':
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writeJSONString(b, k)
			b.WriteString(": ")
			v.vals[i].writePy(b)
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for i, item := range v.items {
			if i > 0 {
				b.WriteString(", ")
			}
			item.writePy(b)
		}
		b.WriteByte(']')
	case 's':
		writeJSONString(b, v.str)
	case 'n':
		b.WriteString(v.str)
	case 'b':
		if v.b {
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
