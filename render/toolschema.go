package render

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/vrender/vrender/protocol"
)

// toolChoiceSchema is vLLM's get_json_schema_from_tools, which the tool
// parser's adjust_request turns into structured_outputs.json: a named
// tool_choice constrains the output to that function's parameters, and
// "required" to a non-empty list of {name, parameters} objects, one
// alternative per function tool, with every tool's "$defs" hoisted to the
// top. It returns nil when generation is not constrained. Key order is
// Python's dict order, so the schema the engine gets is byte-identical.
func toolChoiceSchema(req *protocol.ChatCompletionRequest) (json.RawMessage, error) {
	if len(req.Tools) == 0 {
		return nil, nil
	}
	tc := req.ToolChoice
	if tc.Kind == protocol.ToolChoiceNamed {
		name := tc.Name
		for _, raw := range req.Tools {
			t, err := readTool(raw)
			if err != nil {
				return nil, err
			}
			if t.function && t.name == name {
				if isNullJSON(t.params) {
					return nil, nil
				}
				return t.params, nil
			}
		}
		return nil, badRequestf("Tool '%s' has not been passed in `tools`.", name)
	}
	if tc.Kind != protocol.ToolChoiceRequired {
		return nil, nil
	}
	var b bytes.Buffer
	b.WriteString(`{"type":"array","minItems":1,"items":{"type":"object","anyOf":[`)
	var defs []member
	n := 0
	for _, raw := range req.Tools {
		t, err := readTool(raw)
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
				d, _ := objectMembers(m.value) // not an object: no defs
				for _, def := range d {
					if prev, dup := findMember(defs, def.key); dup {
						if !sameJSON(prev, def.value) {
							return nil, badRequestf("Tool definition '%s' has multiple schemas, which is not supported.", def.key)
						}
						continue
					}
					defs = append(defs, def)
				}
			}
			params = writeObject(kept)
		}
		if isNullJSON(params) || string(params) == "{}" {
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
		b.Write(writeObject(defs))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

type toolInfo struct {
	function bool
	name     string
	params   json.RawMessage
}

func readTool(raw json.RawMessage) (toolInfo, error) {
	var t struct {
		Type     string `json:"type"`
		Function *struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return toolInfo{}, &BadRequestError{Message: "invalid tool: " + err.Error(), Param: "tools"}
	}
	if t.Function == nil || (t.Type != "" && t.Type != "function") {
		return toolInfo{}, nil
	}
	return toolInfo{function: true, name: t.Function.Name, params: t.Function.Parameters}, nil
}

func writeObject(ms []member) json.RawMessage {
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

func findMember(ms []member, key string) (json.RawMessage, bool) {
	for _, m := range ms {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

// sameJSON compares two values as Python compares the dicts they load to.
func sameJSON(a, b json.RawMessage) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return bytes.Equal(a, b)
	}
	ca, _ := json.Marshal(va)
	cb, _ := json.Marshal(vb)
	return bytes.Equal(ca, cb)
}

func isNullJSON(raw json.RawMessage) bool {
	return len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

func badRequestf(format string, args ...any) *BadRequestError {
	return &BadRequestError{Message: fmt.Sprintf(format, args...)}
}
