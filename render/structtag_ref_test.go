package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
)

// refStructuralTagPayload is structuralTagPayload as it was when
// response_format reached render as text: the members split from it, the
// model's order written as text, and that text read again by pyJSONDumps.
// It is the slow side of FuzzStructuralTagPayloadMatchesRef.
func refStructuralTagPayload(raw json.RawMessage) (string, error) {
	members, err := objectMembers(raw)
	if err != nil {
		return "", err
	}
	get := func(ms []member, key string) (json.RawMessage, bool) {
		for _, m := range ms {
			if m.key == key {
				return m.value, true
			}
		}
		return nil, false
	}
	_, hasStructures := get(members, "structures")
	_, hasTriggers := get(members, "triggers")
	declared := []string{"type", "format"}
	if hasStructures && hasTriggers {
		declared = []string{"type", "structures", "triggers"}
	}
	ordered := func(ms []member, declared []string, conv func(key string, v json.RawMessage) (json.RawMessage, error)) (json.RawMessage, error) {
		var b bytes.Buffer
		b.WriteByte('{')
		n := 0
		write := func(key string, v json.RawMessage) error {
			if n > 0 {
				b.WriteByte(',')
			}
			n++
			k, _ := protocol.MarshalJSON(key)
			b.Write(k)
			b.WriteByte(':')
			if conv != nil {
				var err error
				if v, err = conv(key, v); err != nil {
					return err
				}
			}
			b.Write(v)
			return nil
		}
		for _, key := range declared {
			v, ok := get(ms, key)
			if !ok {
				v = json.RawMessage("null")
			}
			if err := write(key, v); err != nil {
				return nil, err
			}
		}
		for _, m := range ms {
			if !slices.Contains(declared, m.key) {
				if err := write(m.key, m.value); err != nil {
					return nil, err
				}
			}
		}
		b.WriteByte('}')
		return b.Bytes(), nil
	}
	dumped, err := ordered(members, declared, func(key string, v json.RawMessage) (json.RawMessage, error) {
		if key != "structures" {
			return v, nil
		}
		list, err := wire.Parse(v)
		if err != nil {
			return nil, err
		}
		if list.Kind != wire.Array {
			return nil, errors.New("structures: want a JSON list")
		}
		var b bytes.Buffer
		b.WriteByte('[')
		for i, it := range list.Arr {
			if i > 0 {
				b.WriteByte(',')
			}
			ms, err := objectMembers(it.Raw)
			if err != nil {
				return nil, err
			}
			d, err := ordered(ms, []string{"begin", "schema", "end"}, nil)
			if err != nil {
				return nil, err
			}
			b.Write(d)
		}
		b.WriteByte(']')
		return b.Bytes(), nil
	})
	if err != nil {
		return "", err
	}
	return pyJSONDumps(dumped)
}

var structuralTagSeeds = []string{
	`{"type":"structural_tag","format":{"type":"any_text"},"x<&>":"<&>"}`,
	`{"extra":"é","triggers":["<a"],"type":"structural_tag","structures":[{"x":1.0,"end":"</a>","begin":"<a>"}]}`,
	`{"format":{"k":1e2},"type":"structural_tag"}`,
	`{"type":"structural_tag","structures":[]}`,
	`{"type":"structural_tag","structures":{"a":1},"triggers":[]}`,
	`{"type":"structural_tag","structures":[1],"triggers":[]}`,
	`{"type":"structural_tag","structures":[{"begin":"a","begin":"b"}],"triggers":[],"type":"x"}`,
	`{"structures":"s"}`,
}

// checkStructuralTagPayloadMatchesRef: for any object protocol could
// hand on as response_format, the tree reader writes what the text
// reader wrote, or both refuse. TestPyJSONMatchesRef and
// FuzzPyJSONMatchesRef run it, with structuralTagSeeds among their seeds.
func checkStructuralTagPayloadMatchesRef(t *testing.T, raw []byte) {
	t.Helper()
	n, err := wire.Parse(raw)
	if err != nil || n.Kind != wire.Object || !json.Valid(raw) {
		return
	}
	got, gotErr := structuralTagPayload(n)
	want, wantErr := refStructuralTagPayload(raw)
	if got != want || (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
		t.Fatalf("%s: payload %q (%v), reference %q (%v)", raw, got, gotErr, want, wantErr)
	}
}
