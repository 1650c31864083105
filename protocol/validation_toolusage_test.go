package protocol

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/vrender/vrender/internal/pylax"
)

// refCheckToolUsage is checkToolUsage as it read tool_choice over
// encoding/json, before the choice was decoded once (toolChoiceOf); kept to
// hold the tree reading to the same errors.
func refCheckToolUsage(obj *object) *pylax.FieldError {
	tools, hasTools := obj.Member("tools")
	if hasTools && pylax.Kind(tools) == '[' {
		// Members come from a parsed body, so tools is valid JSON.
		if pylax.IsEmptyArray(tools) {
			return obj.ValidatorError("ValueError",
				"`tools` must not be an empty array. Either provide at least one tool or omit the field entirely.", "", "")
		}
	}
	tc, hasTC := obj.Member("tool_choice")
	if !hasTC {
		return nil
	}
	if s, ok := pylax.LaxString(tc); ok && s == "none" {
		return nil
	}
	if pylax.IsNull(tc) {
		return nil
	}
	if !hasTools || pylax.IsNull(tools) {
		return obj.ValidatorError("VLLMValidationError", "When using `tool_choice`, `tools` must be set.", "tool_choice", "")
	}
	if s, ok := pylax.LaxString(tc); ok && (s == "auto" || s == "required") {
		return nil
	}
	if pylax.Kind(tc) != '{' {
		return obj.ValidatorError("VLLMValidationError", "Invalid value for `tool_choice`: "+pylax.StrOfJSON(tc)+
			"! Only named tools, \"none\", \"auto\" or \"required\" are supported.", "tool_choice", "")
	}
	var choice map[string]json.RawMessage
	_ = json.Unmarshal(tc, &choice)
	function, ok := choice["function"]
	if !ok || pylax.Kind(function) != '{' {
		return obj.ValidatorError("VLLMValidationError", "Invalid value for `function`: `"+pylax.StrOfJSON(function)+
			"` in `tool_choice`! "+toolChoiceUsage, "tool_choice.function", "")
	}
	var fn map[string]json.RawMessage
	_ = json.Unmarshal(function, &fn)
	nameRaw, ok := fn["name"]
	if !ok {
		return obj.ValidatorError("VLLMValidationError", "Expected field `name` in `function` in `tool_choice`! "+
			toolChoiceUsage, "tool_choice.function.name", "")
	}
	name, isStr := pylax.LaxString(nameRaw)
	if !isStr || name == "" {
		return obj.ValidatorError("VLLMValidationError", "Invalid `name` in `function`: `"+pylax.StrOfJSON(nameRaw)+
			"` in `tool_choice`! "+toolChoiceUsage, "tool_choice.function.name", "")
	}
	var toolList []struct {
		Function struct {
			Name *string `json:"name"`
		} `json:"function"`
	}
	_ = json.Unmarshal(tools, &toolList)
	for _, t := range toolList {
		if t.Function.Name != nil && *t.Function.Name == name {
			return nil
		}
	}
	return obj.ValidatorError("VLLMValidationError",
		"The tool specified in `tool_choice` does not match any of the specified `tools`", "tool_choice", "")
}

var toolUsageTools = []string{``, `null`, `[]`, `[{"type":"function","function":{"name":"f"}}]`, `"x"`,
	`[{"function":{"name":5}},{"function":{"name":"f"}}]`, `[5,{"function":{"name":"f"}}]`, `{"function":{"name":"f"}}`,
	`[{"function":"f"}]`, `[{"function":{"name":"g"}}]`, `[{"function":{"name":null}}]`, `[{"function":{"name":"\u0066"}}]`,
	`[{"function":{"name":"get_weather"}}]`, `[{"function":null},{"function":{"name":"a"}}]`}

// structuredOutputsCases are structured_outputs values the count check
// reads, one picked per tool_choice case.
var structuredOutputsCases = []string{``, `null`, `5`, `{}`, `{"json":{}}`, `{"json":null,"regex":"a"}`,
	`{"json":{},"regex":"a"}`, `{"choice":["a"],"regex":null}`, `{"regex":"a","regex":null}`, `{"JSON":{}}`}

func checkToolUsageMatches(t *testing.T, tools, choice []byte) {
	t.Helper()
	body := []byte(`{"messages":[]`)
	if so := structuredOutputsCases[len(choice)%len(structuredOutputsCases)]; so != "" {
		body = append(append(body, `,"structured_outputs":`...), so...)
	}
	if len(tools) > 0 {
		body = append(append(body, `,"tools":`...), tools...)
	}
	if len(choice) > 0 {
		body = append(append(body, `,"tool_choice":`...), choice...)
	}
	body = append(body, '}')
	obj, fe := decodeBody(body, "ChatCompletionRequest")
	if fe != nil {
		return
	}
	got, want := checkToolUsage(obj), refCheckToolUsage(obj)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: checkToolUsage = %+v, encoding/json reading %+v", body, got, want)
	}
	for _, withParam := range []bool{false, true} {
		got, want := checkStructuredOutputsCount(withParam)(obj), refCheckStructuredOutputsCount(withParam)(obj)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: checkStructuredOutputsCount(%v) = %+v, encoding/json reading %+v", body, withParam, got, want)
		}
	}
}

func TestCheckToolUsageMatchesEncodingJSON(t *testing.T) {
	for _, tools := range toolUsageTools {
		for _, c := range toolChoiceCases {
			checkToolUsageMatches(t, []byte(tools), []byte(c))
		}
	}
}

func FuzzCheckToolUsage(f *testing.F) {
	for i, c := range toolChoiceCases {
		f.Add([]byte(toolUsageTools[i%len(toolUsageTools)]), []byte(c))
	}
	f.Fuzz(func(t *testing.T, tools, choice []byte) {
		if foldedKeys(choice) || foldedKeys(tools) {
			return
		}
		checkToolUsageMatches(t, tools, choice)
	})
}

// refCheckStructuredOutputsCount is checkStructuredOutputsCount as it read
// structured_outputs and tool_choice over encoding/json.
func refCheckStructuredOutputsCount(withParam bool) func(*object) *pylax.FieldError {
	return func(obj *object) *pylax.FieldError {
		raw, ok := obj.Member("structured_outputs")
		if !ok || pylax.IsNull(raw) || pylax.Kind(raw) != '{' {
			return nil
		}
		var so map[string]json.RawMessage
		_ = json.Unmarshal(raw, &so)
		count := 0
		for _, k := range []string{"json", "regex", "choice"} {
			if v, ok := so[k]; ok && !pylax.IsNull(v) {
				count++
			}
		}
		param := ""
		if withParam {
			param = "structured_outputs"
		}
		if count > 1 {
			return obj.ValidatorError("VLLMValidationError",
				"You can only use one kind of constraints for structured outputs ('json', 'regex' or 'choice').", param, "")
		}
		if withParam || count == 0 {
			return nil
		}
		tc, hasTC := obj.Nodes["tool_choice"]
		if !hasTC {
			return nil // "none", or "auto" once check_tool_usage has run
		}
		switch toolChoiceOf(tc).Kind {
		case ToolChoiceNone, ToolChoiceAuto, ToolChoiceRequired:
			return nil
		}
		return obj.ValidatorError("VLLMValidationError",
			"You can only either use constraints for structured outputs or tools, not both.", "", "")
	}
}
