package harmony

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/wire"
)

// refParseValue is how tool parameters were parsed before wire.Parse (a
// walk of encoding/json's token stream), kept as the reference of
// FuzzParseValueMatchesRef.
func refParseValue(data []byte) (*value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := refDecodeValue(dec, 0)
	if err != nil {
		return nil, fmt.Errorf("harmony: tool parameters: %w", err)
	}
	return v, nil
}

// refMaxDepth bounds nesting so a hostile schema cannot exhaust the stack.
const refMaxDepth = 512

func refDecodeValue(dec *json.Decoder, depth int) (*value, error) {
	if depth > refMaxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", refMaxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			v := &value{kind: 'o'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				child, err := refDecodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				if i := v.index(k); i >= 0 {
					v.vals[i] = child // last value wins, in first position, as serde_json's IndexMap
					continue
				}
				v.keys = append(v.keys, k)
				v.vals = append(v.vals, child)
			}
			_, err := dec.Token()
			return v, err
		}
		v := &value{kind: 'a'}
		for dec.More() {
			child, err := refDecodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			v.vals = append(v.vals, child)
		}
		_, err := dec.Token()
		return v, err
	case string:
		return &value{kind: 's', str: t}, nil
	case json.Number:
		return &value{kind: 'n', str: t.String()}, nil
	case bool:
		return &value{kind: 'b', str: fmt.Sprint(t)}, nil
	default:
		return &value{kind: 'z', str: "null"}, nil
	}
}

// dumpValue writes a tree's kinds and contents.
func dumpValue(b *strings.Builder, v *value) {
	b.WriteByte(v.kind)
	switch v.kind {
	case 'o':
		b.WriteByte('{')
		for i, k := range v.keys {
			b.WriteString(strconv.Quote(k) + ":")
			dumpValue(b, v.vals[i])
			b.WriteByte(',')
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for _, c := range v.vals {
			dumpValue(b, c)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	default:
		b.WriteString(strconv.Quote(v.str))
	}
}

// checkParseValueMatchesRef fails unless parseValue gives the reference's
// tree, or both refuse. The one difference allowed: the token walk read
// the first value and ignored what followed it, which is not JSON (tool
// parameters reach here already checked, as one value).
func checkParseValueMatchesRef(t *testing.T, data []byte) {
	t.Helper()
	ref, refErr := refParseValue(data)
	got, err := parseValue(data)
	if err != nil && refErr == nil && wire.Valid(data) != nil {
		return
	}
	if (err == nil) != (refErr == nil) {
		t.Fatalf("%q: err %v, reference %v", data, err, refErr)
	}
	if err != nil {
		return
	}
	var g, w strings.Builder
	dumpValue(&g, got)
	dumpValue(&w, ref)
	if g.String() != w.String() {
		t.Fatalf("%q:\n got %s\nwant %s", data, g.String(), w.String())
	}
}

var parseValueSeeds = []string{
	`{"type":"object","properties":{"a":{"oneOf":[{"type":"string","default":"x"},{"type":"number"}],"default":1}}}`,
	`{"type":["integer","null"],"enum":[],"items":{"type":"array"}}`, `{"a":1,"b":2,"a":{"c":true,"c":false}}`,
	`["\u00e9\ud83d\ude00\ud800", "\n\t\"", -0, 1E+2, true, false, null]`, "\"a\xffb\"", `{"a" 1}`, `[1,]`,
	`{} x`, `{"type":`, ``, `01`, `NaN`, strings.Repeat("[", 512) + strings.Repeat("]", 512),
	strings.Repeat("[", 513) + strings.Repeat("]", 513), strings.Repeat("[", 600),
}

func TestParseValueMatchesRef(t *testing.T) {
	for _, s := range parseValueSeeds {
		checkParseValueMatchesRef(t, []byte(s))
	}
}

func FuzzParseValueMatchesRef(f *testing.F) {
	for _, s := range parseValueSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkParseValueMatchesRef)
}

// parseValue is what a tool's parameters go through from the request body:
// protocol's wire.Parse, then schemaValue.
func parseValue(data []byte) (*value, error) {
	n, err := wire.Parse(data)
	if err != nil {
		return nil, err
	}
	return schemaValue(n)
}
