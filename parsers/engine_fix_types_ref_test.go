package parsers

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/parsers/pyjson"
)

// refParseJNode is how _fix_arg_types read arguments before wire.Parse (a
// walk of encoding/json's token stream), kept as the reference of
// FuzzParseJNodeMatchesRef.
func refParseJNode(s string) (*jnode, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	n, err := refReadJNode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("extra data after the value")
	}
	return n, nil
}

func refReadJNode(dec *json.Decoder) (*jnode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &jnode{kind: 'a'}
		if t == '{' {
			n.kind = 'o'
		}
		for dec.More() {
			key := ""
			if n.kind == 'o' {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ = kt.(string)
			}
			v, err := refReadJNode(dec)
			if err != nil {
				return nil, err
			}
			n.set(key, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return n, nil
	case string:
		return &jnode{kind: 's', str: t}, nil
	case json.Number:
		c, err := pyjson.Canonical(string(t))
		if err != nil {
			return nil, err
		}
		return &jnode{kind: 'c', canon: c}, nil
	case bool:
		if t {
			return &jnode{kind: 'c', canon: "true"}, nil
		}
		return &jnode{kind: 'c', canon: "false"}, nil
	}
	return &jnode{kind: 'c', canon: "null"}, nil
}

// set appends an array item or an object field; a repeated key keeps its
// first position and takes the new value, as a Python dict does.
func (n *jnode) set(key string, v *jnode) {
	if n.kind == 'o' {
		for i, k := range n.keys {
			if k == key {
				n.vals[i] = v
				return
			}
		}
		n.keys = append(n.keys, key)
	}
	n.vals = append(n.vals, v)
}

// checkParseJNodeMatchesRef fails unless parseJNode gives the reference's
// tree (written as json.dumps would) or both refuse. Allowed: wire.Parse
// refuses nesting deeper than CPython's recursion limit, where json.loads
// raises, which the token walk accepted.
func checkParseJNodeMatchesRef(t *testing.T, s string) {
	t.Helper()
	ref, refErr := refParseJNode(s)
	got, err := parseJNode(s)
	if err != nil && refErr == nil && errors.Is(err, wire.ErrTooDeep) {
		return
	}
	if (err == nil) != (refErr == nil) {
		t.Fatalf("%q: err %v, reference %v", s, err, refErr)
	}
	if err != nil {
		return
	}
	var g, w strings.Builder
	got.write(&g)
	ref.write(&w)
	if g.String() != w.String() || got.kind != ref.kind {
		t.Fatalf("%q:\n got %s\nwant %s", s, g.String(), w.String())
	}
}

var jnodeSeeds = []string{
	`{"a": 1, "b": [1.50, -0, 1e2, 1E-7, 12345678901234567890], "c": {"d": "x\ny", "d": null}, "e": true, "f": false}`,
	`["\u00e9\ud83d\ude00\ud800", "\t\"", -0.0]`, "\"a\xffb\"", `{"a" 1}`, `[1,]`, `{} x`, ``, `01`, `NaN`,
	`1e400`, `-1e-400`, `{"a":{"a":{"a":[]}}}`, strings.Repeat("[", 991) + strings.Repeat("]", 991),
}

func TestParseJNodeMatchesRef(t *testing.T) {
	for _, s := range jnodeSeeds {
		checkParseJNodeMatchesRef(t, s)
	}
}

func FuzzParseJNodeMatchesRef(f *testing.F) {
	for _, s := range jnodeSeeds {
		f.Add(s)
	}
	f.Fuzz(checkParseJNodeMatchesRef)
}
