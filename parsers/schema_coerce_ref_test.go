package parsers

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
)

// The schema coercion read tool schemas with encoding/json before protocol
// typed them; these references are that reading (refTool is the
// parsers.Tool it decoded into), kept to show the typed reading finds the
// same types for every property.

type refTool struct {
	Type     string `json:"type"`
	Function struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// toolProperties is find_tool_properties: the "properties" of the first
// function tool named name, as raw JSON per key; nil when there are none.
func refToolProperties(tools []refTool, name string) map[string]json.RawMessage {
	for _, t := range tools {
		if t.Type != "" && t.Type != "function" || t.Function.Name != name {
			continue
		}
		var params struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if len(t.Function.Parameters) == 0 || json.Unmarshal(t.Function.Parameters, &params) != nil {
			return nil
		}
		return params.Properties
	}
	return nil
}

// schemaTypes is extract_types_from_schema for one property schema, nil
// when the schema is not a JSON object (vLLM then skips the key).
func refSchemaTypes(raw json.RawMessage) map[string]bool {
	var schema map[string]json.RawMessage
	if json.Unmarshal(raw, &schema) != nil || schema == nil {
		return nil
	}
	types := map[string]bool{}
	refCollectSchemaTypes(schema, types)
	if len(types) == 0 {
		types["string"] = true
	}
	return types
}

func refCollectSchemaTypes(schema map[string]json.RawMessage, types map[string]bool) {
	if t, ok := schema["type"]; ok {
		var one string
		var many []json.RawMessage
		if json.Unmarshal(t, &one) == nil {
			types[one] = true
		} else if json.Unmarshal(t, &many) == nil {
			for _, m := range many {
				if json.Unmarshal(m, &one) == nil {
					types[one] = true
				}
			}
		}
	}
	var enum []json.RawMessage
	if e, ok := schema["enum"]; ok && json.Unmarshal(e, &enum) == nil {
		for _, v := range enum {
			types[refEnumType(v)] = true
		}
	}
	for _, field := range []string{"anyOf", "oneOf", "allOf"} {
		var choices []json.RawMessage
		if c, ok := schema[field]; !ok || json.Unmarshal(c, &choices) != nil {
			continue
		}
		for _, c := range choices {
			var sub map[string]json.RawMessage
			if json.Unmarshal(c, &sub) != nil || sub == nil {
				types["string"] = true // a non-dict choice reads as ["string"]
				continue
			}
			inner := map[string]bool{}
			refCollectSchemaTypes(sub, inner)
			if len(inner) == 0 {
				inner["string"] = true
			}
			for k := range inner {
				types[k] = true
			}
		}
	}
}

// enumType is the JSON-schema type Python infers from an enum value.
func refEnumType(v json.RawMessage) string {
	s := strings.TrimSpace(string(v))
	switch {
	case s == "null":
		return "null"
	case s == "true" || s == "false":
		return "boolean"
	case strings.HasPrefix(s, `"`):
		return "string"
	case strings.HasPrefix(s, "["):
		return "array"
	case strings.HasPrefix(s, "{"):
		return "object"
	case strings.ContainsAny(s, ".eE"):
		return "number"
	}
	return "integer"
}

// refDiffers reports a schema where the encoding/json reading was not
// vLLM's: a "type" that is null or a list holding a non-string (it added
// "" or repeated a type, where extract_types_from_schema skips them), or
// a member named "type" or "properties" in another case (encoding/json
// matched it). The typed reading follows vLLM there.
func refDiffers(n *wire.Node) bool {
	switch n.Kind {
	case wire.Array:
		for _, v := range n.Arr {
			if refDiffers(v) {
				return true
			}
		}
	case wire.Object:
		for i, k := range n.Keys {
			v := n.Vals[i]
			if k != "type" && strings.EqualFold(k, "type") || k != "properties" && strings.EqualFold(k, "properties") ||
				strings.ContainsAny(k, "ſ\u212a") {
				return true
			}
			if k == "type" {
				if v.Kind == wire.Null {
					return true
				}
				if v.Kind == wire.Array {
					for _, t := range v.Arr {
						if t.Kind != wire.String {
							return true
						}
					}
				}
			}
			if refDiffers(v) {
				return true
			}
		}
	}
	return false
}

func typeSet(m map[string]bool) string {
	if m == nil {
		return "nil"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return fmt.Sprint(keys)
}

// checkSchemaTypesMatchRaw reads params as a tool's parameters both ways.
func checkSchemaTypesMatchRaw(t *testing.T, params []byte) {
	list := []byte(`[{"type":"function","function":{"name":"f","parameters":` + string(params) + `}}]`)
	tools, err := protocol.DecodeTools(list)
	if err != nil {
		return
	}
	tree, err := wire.Parse(list)
	if err != nil {
		t.Fatal(err)
	}
	if refDiffers(tree) {
		return
	}
	var ref []refTool
	if err := json.Unmarshal(list, &ref); err != nil {
		t.Fatalf("%s: %v", list, err)
	}
	got, want := toolProperties(tools, "f"), refToolProperties(ref, "f")
	if len(got) != len(want) {
		t.Fatalf("%s: %d properties, want %d", params, len(got), len(want))
	}
	for k, raw := range want {
		schema, ok := got[k]
		if !ok {
			t.Fatalf("%s: property %q missing", params, k)
		}
		if g, w := typeSet(schemaTypes(schema)), typeSet(refSchemaTypes(raw)); g != w {
			t.Fatalf("%s: property %q types %s, want %s", params, k, g, w)
		}
	}
	if toolProperties(tools, "g") != nil {
		t.Fatalf("%s: properties for an unknown tool", params)
	}
}

var schemaSeeds = []string{
	`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":["number","null"]},"c":{"enum":[1,1.5,"x",null,true,[],{}]},` +
		`"d":{"anyOf":[{"type":"string"},{"oneOf":[{"type":"boolean"}]},5]},"e":{},"f":5,"g":{"allOf":[]},"h":{"type":"object","properties":{"x":{"type":"integer"}}}}}`,
	`{"properties":null}`, `{"properties":[1]}`, `{}`, `{"properties":{"a":{"type":"integer"},"a":{"type":"string"}}}`,
	`{"properties":{"\u00e9":{"type":"number","enum":[1e5,-0]}}}`,
}

func TestSchemaTypesMatchRaw(t *testing.T) {
	for _, s := range schemaSeeds {
		checkSchemaTypesMatchRaw(t, []byte(s))
	}
}

func FuzzSchemaTypesMatchRaw(f *testing.F) {
	for _, s := range schemaSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkSchemaTypesMatchRaw)
}
