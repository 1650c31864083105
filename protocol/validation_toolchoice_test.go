package protocol

import (
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/pylax"
)

// TestToolChoiceValidation walks vLLM's check_tool_usage rules and the
// field validation after it: which tool_choice/tools combinations are
// refused, with which message and param.
func TestToolChoiceValidation(t *testing.T) {
	const (
		tools     = `"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"g"}}]`
		mustSet   = "When using `tool_choice`, `tools` must be set. (parameter=tool_choice)"
		noMatch   = "The tool specified in `tool_choice` does not match any of the specified `tools` (parameter=tool_choice)"
		emptyList = "`tools` must not be an empty array."
		invalid   = "Only named tools, \"none\", \"auto\" or \"required\" are supported. (parameter=tool_choice)"
	)
	cases := []struct {
		name, fields string
		want         string // "" when the body is valid
		param        string
	}{
		{"absent without tools", ``, "", ""},
		{"absent with tools", tools, "", ""},
		{"none without tools", `"tool_choice":"none"`, "", ""},
		{"null without tools", `"tool_choice":null`, "", ""},
		{"auto without tools", `"tool_choice":"auto"`, mustSet, "tool_choice"},
		{"required without tools", `"tool_choice":"required"`, mustSet, "tool_choice"},
		{"named without tools", `"tool_choice":{"type":"function","function":{"name":"f"}}`, mustSet, "tool_choice"},
		{"named with null tools", `"tools":null,"tool_choice":{"function":{"name":"f"}}`, mustSet, "tool_choice"},
		{"auto", tools + `,"tool_choice":"auto"`, "", ""},
		{"required", tools + `,"tool_choice":"required"`, "", ""},
		{"named first", tools + `,"tool_choice":{"type":"function","function":{"name":"f"}}`, "", ""},
		{"named second", tools + `,"tool_choice":{"type":"function","function":{"name":"g"}}`, "", ""},
		{"named absent from tools", tools + `,"tool_choice":{"type":"function","function":{"name":"h"}}`, noMatch, "tool_choice"},
		{"named differs in case", tools + `,"tool_choice":{"type":"function","function":{"name":"F"}}`, noMatch, "tool_choice"},
		{"named absent, no type", tools + `,"tool_choice":{"function":{"name":"h"}}`, noMatch, "tool_choice"},
		{"empty tools", `"tools":[]`, emptyList, "body"},
		{"empty tools with named", `"tools":[],"tool_choice":{"function":{"name":"f"}}`, emptyList, "body"},
		{"unknown string", tools + `,"tool_choice":"any"`, "Invalid value for `tool_choice`: any! " + invalid, "tool_choice"},
		{"bool", tools + `,"tool_choice":false`, "Invalid value for `tool_choice`: False! " + invalid, "tool_choice"},
		{"function missing", tools + `,"tool_choice":{"type":"function"}`, "Invalid value for `function`: `None` in `tool_choice`!", "tool_choice.function"},
		{"name missing", tools + `,"tool_choice":{"function":{}}`, "Expected field `name` in `function` in `tool_choice`!", "tool_choice.function.name"},
		{"name empty", tools + `,"tool_choice":{"function":{"name":""}}`, "Invalid `name` in `function`: `` in `tool_choice`!", "tool_choice.function.name"},
		{"type not function", tools + `,"tool_choice":{"type":"tool","function":{"name":"f"}}`, "Input should be 'function'", "body.tool_choice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"messages":[{"role":"user","content":"hi"}]`
			if tc.fields != "" {
				body += "," + tc.fields
			}
			body += "}"
			_, err := DecodeChatCompletionRequest([]byte(body))
			checkToolChoiceErr(t, err, tc.want, tc.param)

			// The derender endpoints validate chat_request the same way.
			wrapped := `{"generate_response":{"request_id":"r","choices":[{"index":0,"token_ids":[1],"finish_reason":"stop"}]},"chat_request":` + body + `}`
			_, _, err = DecodeDerenderChat([]byte(wrapped))
			param := tc.param
			if strings.HasPrefix(param, "body") {
				param = "body.chat_request" + strings.TrimPrefix(param, "body")
			}
			checkToolChoiceErr(t, err, tc.want, param)
		})
	}
}

func checkToolChoiceErr(t *testing.T, err error, want, param string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	verr, ok := err.(*pylax.ValidationError)
	if !ok {
		t.Fatalf("err = %v, want a validation error containing %q", err, want)
	}
	resp := NewValidationErrorResponse(verr).Error
	if !strings.Contains(resp.Message, want) {
		t.Errorf("message %q does not contain %q", resp.Message, want)
	}
	if got := deref(resp.Param); got != param {
		t.Errorf("param = %q, want %q", got, param)
	}
	if resp.Code != 400 {
		t.Errorf("code = %d, want 400", resp.Code)
	}
}

// TestDerenderChatRequestGolden replays the refused chat bodies of the
// render golden set as a derender chat_request: the same errors, located
// under chat_request.
func TestDerenderChatRequestGolden(t *testing.T) {
	n := 0
	for _, c := range loadGolden(t, "testdata/render_validation_golden.jsonl") {
		if c.Endpoint != "chat" || c.Result.Error == nil || !strings.Contains(c.Body, "tool") {
			continue
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			wrapped := `{"generate_response":{"request_id":"r","choices":[{"index":0,"token_ids":[1],"finish_reason":"stop"}]},"chat_request":` + c.Body + `}`
			_, _, err := DecodeDerenderChat([]byte(wrapped))
			verr, ok := err.(*pylax.ValidationError)
			if !ok {
				t.Fatalf("err = %v, want a validation error", err)
			}
			got := NewValidationErrorResponse(verr).Error
			want := strings.ReplaceAll(c.Result.Error.Message, "'loc': 'body", "'loc': 'body.chat_request")
			if got.Message != want {
				t.Errorf("message\n got: %s\nwant: %s", got.Message, want)
			}
			wantParam := deref(c.Result.Error.Param)
			if strings.HasPrefix(wantParam, "body") {
				wantParam = "body.chat_request" + strings.TrimPrefix(wantParam, "body")
			}
			if deref(got.Param) != wantParam {
				t.Errorf("param = %q, want %q", deref(got.Param), wantParam)
			}
		})
	}
	if n < 20 {
		t.Fatalf("only %d tool golden cases", n)
	}
}
