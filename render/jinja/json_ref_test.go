package jinja

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// refFromJSON is FromJSON before internal/wire replaced its decoder (an
// encoding/json token walk), kept as the reference of
// FuzzFromJSONMatchesReference.
func refFromJSON(data []byte) (Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeJSONValue(dec)
	if err != nil {
		return Value{}, fmt.Errorf("jinja: decode JSON: %w", err)
	}
	if _, err := dec.Token(); err == nil {
		return Value{}, fmt.Errorf("jinja: decode JSON: trailing data")
	}
	return v, nil
}

func decodeJSONValue(dec *json.Decoder) (Value, error) {
	tok, err := dec.Token()
	if err != nil {
		return Value{}, err
	}
	return jsonTokenValue(dec, tok)
}

func jsonTokenValue(dec *json.Decoder, tok json.Token) (Value, error) {
	switch t := tok.(type) {
	case nil:
		return noneValue, nil
	case bool:
		return Bool(t), nil
	case string:
		return Str(t), nil
	case json.Number:
		return parseJSONNumber(string(t))
	case json.Delim:
		switch t {
		case '[':
			var items []Value
			for dec.More() {
				v, err := decodeJSONValue(dec)
				if err != nil {
					return Value{}, err
				}
				items = append(items, v)
			}
			if _, err := dec.Token(); err != nil {
				return Value{}, err
			}
			if items == nil {
				items = []Value{}
			}
			return List(items), nil
		case '{':
			d := NewDict(4)
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return Value{}, err
				}
				k, ok := kt.(string)
				if !ok {
					return Value{}, fmt.Errorf("object key is %T", kt)
				}
				v, err := decodeJSONValue(dec)
				if err != nil {
					return Value{}, err
				}
				d.SetStr(k, v)
			}
			if _, err := dec.Token(); err != nil {
				return Value{}, err
			}
			return DictValue(d), nil
		}
	}
	return Value{}, fmt.Errorf("unexpected JSON token %v", tok)
}
