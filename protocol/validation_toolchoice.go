package protocol

import (
	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
)

// toolChoiceLiterals are the string members of tool_choice's union, in
// declaration order: pydantic reports one error per member.
var toolChoiceLiterals = []string{"none", "auto", "required"}

// namedToolChoiceType is the field validation of a named tool_choice after
// check_tool_usage accepted it: the validator has checked function and
// name, so only ChatCompletionNamedToolChoiceParam's
// `type: Literal["function"]` can still fail. pydantic then reports the
// whole union: each string literal refusing the object, then the model's
// error on type.
func (o *object) namedToolChoiceType(name string, n *wire.Node) {
	typ, ok := n.Get("type")
	if !ok {
		return // not an object, or type defaults to "function"
	}
	if typ.Kind == wire.String && typ.S == "function" {
		return
	}
	raw, typRaw := n.Raw, typ.Raw
	for _, lit := range toolChoiceLiterals {
		expected := pylax.StrRepr(lit)
		o.Fail(o.At(name), "literal_error", "Input should be "+expected, raw, pylax.CtxEntry{Key: "expected", Value: expected})
	}
	o.Fail(o.At(name, "type"), "literal_error", "Input should be 'function'", typRaw, pylax.CtxEntry{Key: "expected", Value: "'function'"})
}
