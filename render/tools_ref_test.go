package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
)

// The render code read tools from their raw JSON with encoding/json before
// protocol typed them. These references are that reading, kept to show the
// typed values give what it gave: the same schema for tool_choice, the same
// tools for the structural tag, the same Harmony tools. Where the two must
// differ (encoding/json matches member names case-insensitively and reads
// a non-bool strict as an error of its own wording) the check says so.

// refToolChoiceSchema is toolChoiceSchema over raw tools (its $defs
// compared with pyEqualJSON, which replaced an encoding/json comparison
// of float64s on purpose).
func refToolChoiceSchema(raws []json.RawMessage, tc protocol.ToolChoice) (json.RawMessage, error) {
	if len(raws) == 0 {
		return nil, nil
	}
	type info struct {
		function bool
		name     string
		params   json.RawMessage
	}
	read := func(raw json.RawMessage) (info, error) {
		var t struct {
			Type     string `json:"type"`
			Function *struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return info{}, &BadRequestError{Message: "invalid tool: " + err.Error(), Param: "tools"}
		}
		if t.Function == nil || (t.Type != "" && t.Type != "function") {
			return info{}, nil
		}
		return info{function: true, name: t.Function.Name, params: t.Function.Parameters}, nil
	}
	isNull := func(raw json.RawMessage) bool {
		return len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null"
	}
	write := func(ms []member) json.RawMessage {
		var b bytes.Buffer
		b.WriteByte('{')
		for i, m := range ms {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := protocol.MarshalJSON(m.key)
			b.Write(k)
			b.WriteByte(':')
			b.Write(m.value)
		}
		b.WriteByte('}')
		return b.Bytes()
	}
	if tc.Kind == protocol.ToolChoiceNamed {
		for _, raw := range raws {
			t, err := read(raw)
			if err != nil {
				return nil, err
			}
			if t.function && t.name == tc.Name {
				if isNull(t.params) {
					return nil, nil
				}
				return t.params, nil
			}
		}
		return nil, badRequestf("Tool '%s' has not been passed in `tools`.", tc.Name)
	}
	if tc.Kind != protocol.ToolChoiceRequired {
		return nil, nil
	}
	var b bytes.Buffer
	b.WriteString(`{"type":"array","minItems":1,"items":{"type":"object","anyOf":[`)
	var defs []member
	n := 0
	for _, raw := range raws {
		t, err := read(raw)
		if err != nil {
			return nil, err
		}
		if !t.function {
			continue
		}
		params := t.params
		if members, err := objectMembers(params); err == nil {
			kept := members[:0:0]
			for _, m := range members {
				if m.key != "$defs" {
					kept = append(kept, m)
					continue
				}
				d, _ := objectMembers(m.value)
				for _, def := range d {
					var prev json.RawMessage
					for _, p := range defs {
						if p.key == def.key {
							prev = p.value
						}
					}
					if prev != nil {
						a, _ := wire.Parse(prev)
						c, _ := wire.Parse(def.value)
						if !pyEqualJSON(a, c) {
							return nil, badRequestf("Tool definition '%s' has multiple schemas, which is not supported.", def.key)
						}
						continue
					}
					defs = append(defs, def)
				}
			}
			params = write(kept)
		}
		if isNull(params) || string(params) == "{}" {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.WriteString(`{"properties":{"name":{"type":"string","enum":[`)
		name, _ := protocol.MarshalJSON(t.name)
		b.Write(name)
		b.WriteString(`]},"parameters":`)
		b.Write(params)
		b.WriteString(`},"required":["name","parameters"]}`)
	}
	b.WriteString("]}")
	if len(defs) > 0 {
		b.WriteString(`,"$defs":`)
		b.Write(write(defs))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// refStTools is the structural tag's reading of raw tools.
func refStTools(raws []json.RawMessage) ([]stTool, bool, error) {
	var tools []stTool
	anyStrict := false
	for _, raw := range raws {
		var t struct {
			Type     string `json:"type"`
			Function *struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
				Strict     *bool           `json:"strict"`
			} `json:"function"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, false, &BadRequestError{Message: "invalid tool: " + err.Error(), Param: "tools"}
		}
		if t.Function == nil || (t.Type != "" && t.Type != "function") {
			continue
		}
		st := stTool{name: t.Function.Name, strict: t.Function.Strict}
		if p := bytes.TrimSpace(t.Function.Parameters); len(p) > 0 && string(p) != "null" {
			st.params, _ = wire.Parse(t.Function.Parameters)
		}
		tools = append(tools, st)
		anyStrict = anyStrict || (t.Function.Strict != nil && *t.Function.Strict)
	}
	return tools, anyStrict, nil
}

// foldedKey reports a member of a tool or its function whose name
// encoding/json would take for one of the names the references read
// (name, parameters, strict, type, function, description) without being
// it: the one way the references read other members than pydantic does.
func foldedKey(tree *wire.Node) bool {
	names := []string{"type", "function", "name", "parameters", "strict", "description"}
	check := func(n *wire.Node) bool {
		if n == nil || n.Kind != wire.Object {
			return false
		}
		for _, k := range n.Keys {
			for _, want := range names {
				if k != want && strings.EqualFold(k, want) || k != want && strings.EqualFold(strings.ReplaceAll(k, "ſ", "s"), want) ||
					k != want && strings.EqualFold(strings.ReplaceAll(k, "\u212a", "k"), want) {
					return true
				}
			}
		}
		return false
	}
	fn, _ := tree.Get("function")
	return check(tree) || check(fn)
}

// checkToolsMatchRaw decodes a request with the given tools and every
// tool_choice form, and compares the typed reading with the raw one.
func checkToolsMatchRaw(t *testing.T, list []byte, named string) {
	body := append(append([]byte(`{"messages":[{"role":"user","content":"x"}],"tools":`), list...), '}')
	req, err := protocol.DecodeChatCompletionRequest(body)
	if err != nil || len(req.Tools) == 0 {
		return
	}
	tree, err := wire.Parse(list)
	if err != nil {
		t.Fatal(err)
	}
	raws := make([]json.RawMessage, len(tree.Arr))
	for i, n := range tree.Arr {
		if foldedKey(n) {
			return
		}
		raws[i] = n.Raw
	}
	for _, tc := range []protocol.ToolChoice{{Kind: protocol.ToolChoiceRequired}, {Kind: protocol.ToolChoiceAuto},
		{Kind: protocol.ToolChoiceNamed, Name: named}, {Kind: protocol.ToolChoiceNamed, Name: req.Tools[0].Function.Name}} {
		r := *req
		r.ToolChoice = tc
		tree, gerr := toolChoiceSchema(&r)
		got := schemaText(tree) // the engine's text: the reference's, compacted as render did
		want, werr := refToolChoiceSchema(raws, tc)
		if want != nil {
			want, _ = refPyJSONCompact(want)
		}
		if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() || !bytes.Equal(got, want) {
			t.Fatalf("%s, %+v: schema\n%s %v\nwant\n%s %v", list, tc, got, gerr, want, werr)
		}
	}
	got, gotStrict, gerr := stTools(req.Tools)
	want, wantStrict, werr := refStTools(raws)
	if (gerr == nil) != (werr == nil) {
		t.Fatalf("%s: structural tag tools error %v, want %v", list, gerr, werr)
	}
	if gerr != nil {
		if !strings.HasPrefix(gerr.Error(), "invalid tool: ") || !strings.HasPrefix(werr.Error(), "invalid tool: ") {
			t.Fatalf("%s: errors %v and %v", list, gerr, werr)
		}
		return
	}
	if gotStrict != wantStrict || len(got) != len(want) {
		t.Fatalf("%s: %d tools (strict %v), want %d (%v)", list, len(got), gotStrict, len(want), wantStrict)
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.name != w.name || (g.strict == nil) != (w.strict == nil) || g.strict != nil && *g.strict != *w.strict ||
			string(wire.AppendNode(nil, g.schema())) != string(wire.AppendNode(nil, w.schema())) {
			t.Fatalf("%s: tool %d %+v (%s), want %+v (%s)", list, i, g, wire.AppendNode(nil, g.schema()), w, wire.AppendNode(nil, w.schema()))
		}
	}
	for i, ht := range harmonyTools(req.Tools) {
		var ref struct {
			Function struct {
				Name        string          `json:"name"`
				Description *string         `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		if err := json.Unmarshal(raws[i], &ref); err != nil {
			t.Fatal(err)
		}
		desc := ""
		if ref.Function.Description != nil {
			desc = *ref.Function.Description
		}
		p := strings.TrimSpace(string(ref.Function.Parameters))
		if p == "null" {
			p = ""
		}
		gp := ""
		if ht.Parameters != nil {
			gp = string(ht.Parameters.Raw)
		}
		if ht.Name != ref.Function.Name || ht.Description != desc || gp != p {
			t.Fatalf("%s: harmony tool %d %q %q %s, want %q %q %s", list, i, ht.Name, ht.Description, gp, ref.Function.Name, desc, p)
		}
	}
}

var toolsRefSeeds = []string{
	`[{"type":"function","function":{"name":"a","parameters":{"type":"object","$defs":{"D":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/D"}}}}},{"type":"function","function":{"name":"b"}}]`,
	`[{"function":{"name":"a","parameters":{"$defs":{"D":{"type":"string"}}}}},{"function":{"name":"b","parameters":{"$defs":{"D":{"type":"integer"}}}}}]`,
	`[{"function":{"name":"a","parameters":{"$defs":{"D":{"n":1}}}}},{"function":{"name":"b","parameters":{"$defs":{"D":{"n":1.0}},"$defs":5}}}]`,
	`[{"function":{"name":"f","strict":true,"parameters":{ "type" : "object" }}},{"function":{"name":"g","strict":false,"description":"d\nx"}}]`,
	`[{"function":{"name":"f","strict":"yes"}}]`, `[{"function":{"name":"f","parameters":{}}}]`,
	`[{"function":{"name":"\u00e9<&>\u2028","parameters":{"\u00e9":1,"\u0000":[]}}}]`,
}

func TestToolsMatchRaw(t *testing.T) {
	for _, s := range toolsRefSeeds {
		checkToolsMatchRaw(t, []byte(s), "b")
	}
}

func FuzzToolsMatchRaw(f *testing.F) {
	for _, s := range toolsRefSeeds {
		f.Add([]byte(s), "b")
	}
	f.Fuzz(checkToolsMatchRaw)
}

// Python's == on the values json.loads gives: what $defs are compared by.
func TestPyEqualJSON(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{`1`, `1.0`, true}, {`true`, `1`, true}, {`false`, `0.0`, true}, {`true`, `2`, false},
		{`{"a":1,"b":[1,"x"]}`, `{"b":[1.0,"x"],"a":true}`, true}, {`{"a":1}`, `{"a":1,"b":2}`, false},
		{`[1,2]`, `[2,1]`, false}, {`"1"`, `1`, false}, {`null`, `null`, true}, {`null`, `0`, false},
		{`12345678901234567890`, `12345678901234567890.0`, false}, {`12345678901234567168`, `12345678901234567890.0`, true},
		{`1e400`, `2e400`, true}, {`-1e400`, `1e400`, false}, {`0.1`, `0.10000000000000001`, true},
	} {
		a, err := wire.Parse([]byte(c.a))
		if err != nil {
			t.Fatal(err)
		}
		b, err := wire.Parse([]byte(c.b))
		if err != nil {
			t.Fatal(err)
		}
		if got := pyEqualJSON(a, b); got != c.want {
			t.Errorf("%s == %s: %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
