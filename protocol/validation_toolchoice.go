package protocol

import "encoding/json"

// toolChoiceLiterals are the string members of tool_choice's union, in
// declaration order: pydantic reports one error per member.
var toolChoiceLiterals = []string{"none", "auto", "required"}

// namedToolChoiceType is the field validation of a named tool_choice after
// check_tool_usage accepted it: the validator has checked function and
// name, so only ChatCompletionNamedToolChoiceParam's
// `type: Literal["function"]` can still fail. pydantic then reports the
// whole union: each string literal refusing the object, then the model's
// error on type.
func (o *object) namedToolChoiceType(name string, raw json.RawMessage) {
	if jsonKind(raw) != '{' {
		return
	}
	var choice map[string]json.RawMessage
	if json.Unmarshal(raw, &choice) != nil {
		return
	}
	typ, ok := choice["type"]
	if !ok {
		return // defaults to "function"
	}
	if s, isStr := laxString(typ); isStr && s == "function" {
		return
	}
	for _, lit := range toolChoiceLiterals {
		expected := pyStrRepr(lit)
		o.fail(o.at(name), "literal_error", "Input should be "+expected, raw, CtxEntry{Key: "expected", Value: expected})
	}
	o.fail(o.at(name, "type"), "literal_error", "Input should be 'function'", typ, CtxEntry{Key: "expected", Value: "'function'"})
}
