package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/vrender/vrender/internal/pyfmt"
	"github.com/vrender/vrender/internal/wire"
)

// Python's json module, as far as vLLM's output depends on it: values that
// pass through a Python dict are re-serialised by json.dumps, which
// normalises numbers and escapes strings its own way.

type member struct {
	key   string
	value json.RawMessage
}

// objectMembers lists a JSON object's members in order; a repeated key
// keeps its first position and last value, as json.loads does.
func objectMembers(raw json.RawMessage) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("want a JSON object")
	}
	var out []member
	pos := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if i, ok := pos[key]; ok {
			out[i].value = v
			continue
		}
		pos[key] = len(out)
		out = append(out, member{key, v})
	}
	return out, nil
}

// pyJSONDumps is Python's json.dumps with its default separators (", " and
// ": ") and ensure_ascii, of a JSON value, keys in document order.
func pyJSONDumps(raw json.RawMessage) (string, error) {
	return pyJSON(raw, false)
}

// pyJSONCompact is how vLLM's JSONResponse writes a value json.loads read
// from raw: compact separators, non-ASCII kept, numbers as Python prints
// them (1e2 becomes 100.0). A repeated key keeps its first position and its
// last value, as a Python dict does.
func pyJSONCompact(raw json.RawMessage) (json.RawMessage, error) {
	s, err := pyJSON(raw, true)
	return json.RawMessage(s), err
}

func pyJSON(raw json.RawMessage, compact bool) (string, error) {
	if compact {
		return pyCompactValue(raw)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var b bytes.Buffer
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case json.Delim:
			closing := byte(']')
			if t == '{' {
				closing = '}'
			}
			b.WriteByte(byte(t))
			first := true
			for dec.More() {
				if !first {
					b.WriteString(", ")
				}
				first = false
				if t == '{' {
					k, err := dec.Token()
					if err != nil {
						return err
					}
					b.WriteString(asciiJSONString(k.(string)))
					b.WriteString(": ")
				}
				if err := walk(); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			b.WriteByte(closing)
		case string:
			b.WriteString(asciiJSONString(t))
		case json.Number:
			b.WriteString(pyNumber(string(t)))
		case bool:
			b.WriteString(strconv.FormatBool(t))
		case nil:
			b.WriteString("null")
		}
		return nil
	}
	if err := walk(); err != nil {
		return "", err
	}
	return b.String(), nil
}

func pyCompactValue(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", fmt.Errorf("empty JSON value")
	}
	switch raw[0] {
	case '{':
		members, err := objectMembers(raw)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		b.WriteByte('{')
		for i, m := range members {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(pyJSONString(m.key))
			b.WriteByte(':')
			v, err := pyCompactValue(m.value)
			if err != nil {
				return "", err
			}
			b.WriteString(v)
		}
		b.WriteByte('}')
		return b.String(), nil
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return "", err
		}
		var b strings.Builder
		b.WriteByte('[')
		for i, it := range items {
			if i > 0 {
				b.WriteByte(',')
			}
			v, err := pyCompactValue(it)
			if err != nil {
				return "", err
			}
			b.WriteString(v)
		}
		b.WriteByte(']')
		return b.String(), nil
	case '"':
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			return "", err
		}
		return pyJSONString(str), nil
	case 't', 'f', 'n':
		return string(raw), nil
	}
	return pyNumber(string(raw)), nil
}

// pyJSONString is json.dumps of a str with ensure_ascii=False.
func pyJSONString(s string) string { return string(wire.AppendString(nil, s)) }

// asciiJSONString is json.dumps of a str with ensure_ascii=True.
func asciiJSONString(s string) string { return string(wire.AppendStringASCII(nil, s)) }

// pyNumber is how json.dumps writes the number json.loads read from lit.
// An overflowing float keeps its literal: json.dumps would write Infinity,
// which is not JSON and could not travel on as a json.RawMessage.
func pyNumber(lit string) string {
	b, ok := pyfmt.AppendNumberLiteral(nil, lit)
	if !ok {
		return lit
	}
	if s := string(b); s != "inf" && s != "-inf" {
		return s
	}
	return lit
}

// PyJSONCompact is how vLLM's JSONResponse writes the value json.loads
// makes of raw (compact, non-ASCII kept, numbers as Python prints them):
// for a client's or a parser's JSON that vLLM parses and re-serialises.
func PyJSONCompact(raw json.RawMessage) (json.RawMessage, error) { return pyJSONCompact(raw) }

// PyJSONDumps is Python's json.dumps of the value json.loads makes of raw
// (", " and ": " separators, ensure_ascii, keys in document order): for the
// front ends that hand a client's JSON to the template as a string.
func PyJSONDumps(raw json.RawMessage) (string, error) { return pyJSONDumps(raw) }
