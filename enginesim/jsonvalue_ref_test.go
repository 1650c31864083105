package enginesim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// refJSONValue and refParseJSONValue are how schemas were parsed before
// wire.Parse (through encoding/json's token stream), kept as the reference
// of the differential tests.
//
// refJSONValue is a parsed JSON value that keeps object key order: schemas
// are walked property by property, and the JSON written from them must
// list properties in the order the schema declares them.
type refJSONValue struct {
	kind  byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	keys  []string
	vals  []*refJSONValue
	items []*refJSONValue
	str   string // string value, or a number's literal
	b     bool
}

// refParseJSONValue parses one JSON document.
func refParseJSONValue(data []byte) (*refJSONValue, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := refReadJSONValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after JSON value")
	}
	return v, nil
}

const refMaxJSONDepth = 128

func refReadJSONValue(dec *json.Decoder, depth int) (*refJSONValue, error) {
	if depth > refMaxJSONDepth {
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
			v := &refJSONValue{kind: 'o'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key %v is not a string", kt)
				}
				val, err := refReadJSONValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				v.keys = append(v.keys, key)
				v.vals = append(v.vals, val)
			}
			_, err := dec.Token() // '}'
			return v, err
		case '[':
			v := &refJSONValue{kind: 'a'}
			for dec.More() {
				item, err := refReadJSONValue(dec, depth+1)
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
		return &refJSONValue{kind: 's', str: t}, nil
	case json.Number:
		return &refJSONValue{kind: 'n', str: t.String()}, nil
	case bool:
		return &refJSONValue{kind: 'b', b: t}, nil
	case nil:
		return &refJSONValue{kind: 'z'}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}
