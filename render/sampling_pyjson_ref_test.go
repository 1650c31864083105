package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/pyfmt"
	"github.com/vrender/vrender/internal/pylax"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
)

type member struct {
	key   string
	value json.RawMessage
}

// objectMembers lists a JSON object's members in order; a repeated key
// keeps its first position and last value, as json.loads does. Only the
// references read members from text now (the readers walk trees); it is
// checked against refObjectMembers, the encoding/json reader it replaced.
func objectMembers(raw json.RawMessage) ([]member, error) {
	n, err := wire.Parse(raw)
	if err != nil {
		return nil, err
	}
	if n.Kind != wire.Object {
		return nil, fmt.Errorf("want a JSON object")
	}
	out := make([]member, len(n.Keys))
	for i, k := range n.Keys {
		out[i] = member{k, n.Vals[i].Raw}
	}
	return out, nil
}

// refObjectMembers lists a JSON object's members in order; a repeated key
// keeps its first position and last value, as json.loads does.
func refObjectMembers(raw json.RawMessage) ([]member, error) {
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

// refPyJSONDumps is Python's json.dumps with its default separators (", " and
// ": ") and ensure_ascii, of a JSON value, keys in document order.
func refPyJSONDumps(raw json.RawMessage) (string, error) {
	return refPyJSON(raw, false)
}

// refPyJSONCompact is how vLLM's JSONResponse writes a value json.loads read
// from raw: compact separators, non-ASCII kept, numbers as Python prints
// them (1e2 becomes 100.0). A repeated key keeps its first position and its
// last value, as a Python dict does.
func refPyJSONCompact(raw json.RawMessage) (json.RawMessage, error) {
	s, err := refPyJSON(raw, true)
	return json.RawMessage(s), err
}

func refPyJSON(raw json.RawMessage, compact bool) (string, error) {
	if compact {
		return refPyCompactValue(raw)
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

func refPyCompactValue(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", fmt.Errorf("empty JSON value")
	}
	switch raw[0] {
	case '{':
		members, err := refObjectMembers(raw)
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
			v, err := refPyCompactValue(m.value)
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
			v, err := refPyCompactValue(it)
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

var pyJSONSeeds = []string{`{"b":1,"a":[1e2,-0,0.5,"\u00e9\ud83d\ude00"],"b":{"c":null}}`, `[true,false,null]`, `"x\u2028y"`,
	`{}`, `[]`, `12345678901234567890`, `1E400`, `{"k":{"k":{"k":[{"\"":"\\"}]}}}`, ` { "s" : "\n" } `}

// checkPyJSONMatchesRef: on any JSON value both decoders take (callers
// pass members of a decoded body), the same text and the same members.
func checkPyJSONMatchesRef(t *testing.T, raw []byte) {
	t.Helper()
	if wire.Valid(raw) != nil || !json.Valid(raw) {
		return
	}
	// The old dumps kept a repeated key twice; json.loads keeps one (its
	// first position, last value), as the compact form always did, so the
	// reference dumps what the reference compact form kept.
	deduped, _ := refPyJSONCompact(raw)
	got, err := pyJSONDumps(raw)
	want, wantErr := refPyJSONDumps(deduped)
	if got != want || (err == nil) != (wantErr == nil) {
		t.Fatalf("%q: dumps %q (%v), reference %q (%v)", raw, got, err, want, wantErr)
	}
	gotC, err := pyJSONCompact(raw)
	wantC, wantErr := refPyJSONCompact(raw)
	if string(gotC) != string(wantC) || (err == nil) != (wantErr == nil) {
		t.Fatalf("%q: compact %q (%v), reference %q (%v)", raw, gotC, err, wantC, wantErr)
	}
	gotM, err := objectMembers(raw)
	wantM, wantErr := refObjectMembers(raw)
	if (err == nil) != (wantErr == nil) || fmt.Sprintf("%q", gotM) != fmt.Sprintf("%q", wantM) {
		t.Fatalf("%q: members %q (%v), reference %q (%v)", raw, gotM, err, wantM, wantErr)
	}
	checkStructuralTagPayloadMatchesRef(t, raw)
}

func TestPyJSONMatchesRef(t *testing.T) {
	for _, s := range slices.Concat(pyJSONSeeds, structuralTagSeeds) {
		checkPyJSONMatchesRef(t, []byte(s))
	}
}

func FuzzPyJSONMatchesRef(f *testing.F) {
	for _, s := range slices.Concat(pyJSONSeeds, structuralTagSeeds) {
		f.Add([]byte(s))
	}
	f.Fuzz(checkPyJSONMatchesRef)
}

// refExtraArgs is extraArgs as it was before it read vllm_xargs as a tree
// (members split from its text), the reference of FuzzExtraArgsMatchesRef.
// extraArgs is vLLM's extra_args: vllm_xargs with kv_transfer_params and
// ec_transfer_params added when they are non-empty; nil when all are empty.
func refExtraArgs(xargs, kv, ec json.RawMessage) (json.RawMessage, error) {
	var members []member
	if len(xargs) > 0 {
		var err error
		if members, err = refObjectMembers(xargs); err != nil {
			return nil, err
		}
	}
	set := func(key string, v json.RawMessage) error {
		if len(v) == 0 {
			return nil
		}
		m, err := refObjectMembers(v)
		if err != nil || len(m) == 0 {
			return err // empty dicts are falsy: not added
		}
		for i := range members {
			if members[i].key == key {
				members[i].value = v
				return nil
			}
		}
		members = append(members, member{key, v})
		return nil
	}
	if err := set("kv_transfer_params", kv); err != nil {
		return nil, err
	}
	if err := set("ec_transfer_params", ec); err != nil {
		return nil, err
	}
	if len(members) == 0 {
		return nil, nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := protocol.MarshalJSON(m.key)
		b.Write(k)
		b.WriteByte(':')
		v, err := refPyJSONCompact(m.value)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

var extraArgsSeeds = [][3]string{{`{"a":1,"b":["x",2.50]}`, `{"k":1}`, ``}, {``, `{}`, `{"e":{"f":null}}`},
	{`{"kv_transfer_params":1,"z":"\u00e9"}`, `{"x":[1e2]}`, `{"y":true}`}, {`{}`, ``, ``}, {`{"a":1,"a":2}`, `[1]`, ``}}

// checkExtraArgsMatchesRef: for vllm_xargs as protocol decodes it (an
// object) and any transfer params, the same extra_args or both refuse.
func checkExtraArgsMatchesRef(t *testing.T, xargs, kv, ec string) {
	t.Helper()
	var n *node
	if xargs != "" {
		var err error
		if n, err = wire.Parse([]byte(xargs)); err != nil || n.Kind != wire.Object || !json.Valid([]byte(xargs)) {
			return
		}
	}
	// protocol hands the transfer params on as objects (OptionalDictNode).
	var tn [2]*node
	for i, v := range []string{kv, ec} {
		if v == "" {
			continue
		}
		var err error
		if tn[i], err = wire.Parse([]byte(v)); err != nil || tn[i].Kind != wire.Object || !json.Valid([]byte(v)) {
			return
		}
	}
	got, err := extraArgs(n, tn[0], tn[1])
	want, wantErr := refExtraArgs(json.RawMessage(xargs), json.RawMessage(kv), json.RawMessage(ec))
	if string(got) != string(want) || (err == nil) != (wantErr == nil) {
		t.Fatalf("%q %q %q: extra_args %s (%v), reference %s (%v)", xargs, kv, ec, got, err, want, wantErr)
	}
}

func TestExtraArgsMatchesRef(t *testing.T) {
	for _, s := range extraArgsSeeds {
		checkExtraArgsMatchesRef(t, s[0], s[1], s[2])
	}
}

func FuzzExtraArgsMatchesRef(f *testing.F) {
	for _, s := range extraArgsSeeds {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(checkExtraArgsMatchesRef)
}

// pyNumber is how json.dumps writes the number json.loads read from lit, as
// the replaced writer did: an overflowing float keeps its literal.
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

// pyJSONDumps is Python's json.dumps with its default separators (", " and
// ": ") and ensure_ascii, of a JSON value, keys in document order.
func pyJSONDumps(raw json.RawMessage) (string, error) {
	n, err := wire.Parse(raw)
	if err != nil {
		return "", err
	}
	return string(pylax.AppendPyDumps(nil, n)), nil
}
