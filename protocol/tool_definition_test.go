package protocol

import (
	"errors"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/pylax"
)

// FunctionDefinition's optional fields are typed: description is str |
// None, parameters dict[str, Any] | None; pydantic refuses anything else.
func TestToolFunctionDefinitionTypes(t *testing.T) {
	cases := []struct {
		name, function string
		want           string // "" when valid
	}{
		{"parameters object", `{"name":"f","parameters":{"type":"object"}}`, ""},
		{"parameters null", `{"name":"f","parameters":null}`, ""},
		{"description null", `{"name":"f","description":null}`, ""},
		{"parameters string", `{"name":"f","parameters":"object"}`, "'type': 'dict_type', 'loc': 'body.tools.0.function.parameters'"},
		{"parameters list", `{"name":"f","parameters":[]}`, "'type': 'dict_type', 'loc': 'body.tools.0.function.parameters'"},
		{"description number", `{"name":"f","description":5}`, "'type': 'string_type', 'loc': 'body.tools.0.function.description'"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":` + tc.function + `}]}`
			_, err := DecodeChatCompletionRequest([]byte(body))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			var verr *pylax.ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("error %v, want a *ValidationError", err)
			}
			if msg := NewValidationErrorResponse(verr).Error.Message; !strings.Contains(msg, tc.want) {
				t.Errorf("message %q lacks %q", msg, tc.want)
			}
		})
	}
}
