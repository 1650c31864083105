package render

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// deepTool is a tool whose parameters nest levels object schemas (two
// JSON levels each).
func deepTool(levels int) json.RawMessage {
	inner := `{"type":"string"}`
	for range levels {
		inner = `{"type":"object","properties":{"x":` + inner + `}}`
	}
	return json.RawMessage(`{"type":"function","function":{"name":"f","parameters":` + inner + `}}`)
}

func TestToolsNestingError(t *testing.T) {
	cases := []struct {
		name string
		tool json.RawMessage
		want string // "" accepts
	}{
		{name: "shallow", tool: deepTool(10)},
		{name: "at limit", tool: deepTool(250)},
		{name: "too deep", tool: deepTool(300), want: "tools.0 is nested more than 512 levels deep"},
	}
	for _, tc := range cases {
		_, err := (&Renderer{}).toolsNode(ChatInput{Tools: decodeTools(t, tc.tool)})
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		var be *BadRequestError
		if !errors.As(err, &be) || !strings.Contains(be.Message, tc.want) || be.Param != "tools.0" {
			t.Errorf("%s: got %v, want %q on tools.0", tc.name, err, tc.want)
		}
	}
}
