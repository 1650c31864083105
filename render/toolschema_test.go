package render

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/protocol"
)

func TestToolChoiceSchema(t *testing.T) {
	tools := decodeTools(t,
		json.RawMessage(`{"type":"function","function":{"name":"a","parameters":{"type":"object","$defs":{"D":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/D"}}}}}`),
		json.RawMessage(`{"type":"function","function":{"name":"b"}}`),
	)
	cases := []struct {
		name, choice, want, wantErr string
	}{
		{name: "required", choice: `"required"`,
			want: `{"type":"array","minItems":1,"items":{"type":"object","anyOf":[` +
				`{"properties":{"name":{"type":"string","enum":["a"]},"parameters":{"type":"object","properties":{"x":{"$ref":"#/$defs/D"}}}},"required":["name","parameters"]},` +
				`{"properties":{"name":{"type":"string","enum":["b"]},"parameters":{"type":"object","properties":{}}},"required":["name","parameters"]}` +
				`]},"$defs":{"D":{"type":"string"}}}`},
		{name: "named", choice: `{"type":"function","function":{"name":"a"}}`,
			want: `{"type":"object","$defs":{"D":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/D"}}}`},
		{name: "named without parameters", choice: `{"type":"function","function":{"name":"b"}}`},
		{name: "named unknown", choice: `{"type":"function","function":{"name":"zz"}}`, wantErr: "Tool 'zz' has not been passed"},
		{name: "auto", choice: `"auto"`},
		{name: "none", choice: `"none"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := &protocol.ChatCompletionRequest{Tools: tools, ToolChoice: toolChoice([]byte(tc.choice))}
			got, err := toolChoiceSchema(req)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || string(schemaText(got)) != tc.want {
				t.Errorf("got %s, %v\nwant %s", schemaText(got), err, tc.want)
			}
		})
	}
}

func TestToolChoiceSchemaConflictingDefs(t *testing.T) {
	req := &protocol.ChatCompletionRequest{ToolChoice: protocol.ToolChoice{Kind: protocol.ToolChoiceRequired}, Tools: decodeTools(t,
		json.RawMessage(`{"type":"function","function":{"name":"a","parameters":{"$defs":{"D":{"type":"string"}}}}}`),
		json.RawMessage(`{"type":"function","function":{"name":"b","parameters":{"$defs":{"D":{"type":"integer"}}}}}`),
	)}
	if _, err := toolChoiceSchema(req); err == nil || !strings.Contains(err.Error(), "multiple schemas") {
		t.Errorf("err %v", err)
	}
}

// toolChoice reads a fixture's tool_choice as a decoded request carries it.
func toolChoice(raw []byte) protocol.ToolChoice {
	var tc protocol.ToolChoice
	_ = tc.UnmarshalJSON(raw)
	return tc
}

// schemaText is the schema as the engine gets it (structured_outputs.json
// is written Python-compact), nil for none.
func schemaText(n *node) []byte {
	if n == nil {
		return nil
	}
	return pylax.AppendPyCompact(nil, n)
}
