package protocol

// The readers of the request fields whose types are protocol's own
// (logit_bias, stream_options, tools, tool_choice, structured_outputs,
// vllm_xargs, ...), written over internal/pylax's generic readers; the
// wire types are in chat.go, completion.go and sampling.go.

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
)

// logitBias is `logit_bias: dict[str, float] | None`, kept in key order.
func (o *object) logitBias(name string) []LogitBiasEntry {
	n := o.OptionalDictNode(name)
	if n == nil {
		return nil
	}
	out := make([]LogitBiasEntry, 0, len(n.Keys))
	valid := true
	for i, key := range n.Keys {
		v, typ, msg := pylax.LaxFloat(n.Vals[i].Raw)
		if typ != "" {
			o.Fail(o.At(name, key), typ, msg, n.Vals[i].Raw)
			valid = false
			continue
		}
		out = append(out, LogitBiasEntry{Key: key, Bias: v})
	}
	if !valid {
		return nil
	}
	return out
}

// thinkingTokenBudget is vLLM's ThinkingTokenBudget: a non-negative int, or
// -1 (unlimited, stored as None); bools and floats are refused by its
// before-validator.
func (o *object) thinkingTokenBudget(name string) *int {
	raw, ok := o.Member(name)
	if !ok || pylax.IsNull(raw) {
		return nil
	}
	const msg = "`thinking_token_budget` must be a non-negative integer or -1 for unlimited."
	k := pylax.Kind(raw)
	text := strings.TrimSpace(string(raw))
	fail := func() *int {
		o.Fail(o.At(name), "value_error", "Value error, "+msg+" (parameter=thinking_token_budget, value="+pylax.StrOfJSON(raw)+")", raw,
			pylax.CtxEntry{Key: "error", Value: pylax.PyException{Class: "VLLMValidationError", Message: msg, Parameter: new(name)}})
		return nil
	}
	if k != '-' && !pylax.IsDigit(k) || strings.ContainsAny(text, ".eE") {
		return fail()
	}
	n, ok := new(big.Int).SetString(text, 10)
	if !ok || n.Cmp(big.NewInt(-1)) < 0 {
		return fail()
	}
	if n.Sign() < 0 {
		return nil
	}
	v := pylax.ClampInt(n)
	return &v
}

// streamOptions is `stream_options: StreamOptions | None`.
func (o *object) streamOptions(name string) *StreamOptions {
	sub, _ := o.Nested(name, false, "StreamOptions")
	if sub == nil {
		return nil
	}
	so := &StreamOptions{
		IncludeUsage:         sub.OptionalBool("include_usage", false),
		ContinuousUsageStats: sub.OptionalBool("continuous_usage_stats", false),
	}
	o.Errs = append(o.Errs, sub.Errs...)
	return so
}

// dictList is a `name: list[dict] | None` field whose items are objects
// carrying a "function" object with a string "name" (OpenAI tools).
func (o *object) dictList(name string) []*wire.Node {
	items, ok := o.ListNodes(name, false)
	if !ok {
		return nil
	}
	valid := true
	for i, item := range items {
		if item.Kind != wire.Object {
			o.Fail(o.At(name, i), "model_type", "Input should be a valid dictionary or instance of ChatCompletionToolsParam", item.Raw,
				pylax.CtxEntry{Key: "class_name", Value: "ChatCompletionToolsParam"})
			valid = false
			continue
		}
		if t, ok := item.Get("type"); ok {
			if s, _ := t.Text(); s != "function" {
				o.Fail(o.At(name, i, "type"), "literal_error", "Input should be 'function'", t.Raw,
					pylax.CtxEntry{Key: "expected", Value: "'function'"})
				valid = false
			}
		}
		fn, ok := item.Get("function")
		switch {
		case !ok:
			o.Fail(o.At(name, i, "function"), "missing", "Field required", item.Raw)
			valid = false
			continue
		case fn.Kind != wire.Object:
			o.Fail(o.At(name, i, "function"), "model_type", "Input should be a valid dictionary or instance of FunctionDefinition", fn.Raw,
				pylax.CtxEntry{Key: "class_name", Value: "FunctionDefinition"})
			valid = false
			continue
		}
		if n, ok := fn.Get("name"); !ok {
			o.Fail(o.At(name, i, "function", "name"), "missing", "Field required", fn.Raw)
			valid = false
		} else if n.Kind != wire.String {
			o.Fail(o.At(name, i, "function", "name"), "string_type", "Input should be a valid string", n.Raw)
			valid = false
		}
		// FunctionDefinition's optional fields: description: str | None,
		// parameters: dict[str, Any] | None.
		if d, ok := fn.Get("description"); ok && !d.IsNull() && d.Kind != wire.String {
			o.Fail(o.At(name, i, "function", "description"), "string_type", "Input should be a valid string", d.Raw)
			valid = false
		}
		if p, ok := fn.Get("parameters"); ok && !p.IsNull() && p.Kind != wire.Object {
			o.Fail(o.At(name, i, "function", "parameters"), "dict_type", "Input should be a valid dictionary", p.Raw)
			valid = false
		}
	}
	if !valid {
		return nil
	}
	return items
}

// toolChoice reads tool_choice, defaulting an absent one to "none", or
// "auto" when tools are given (check_tool_usage). The model validator has
// already refused every other invalid form.
func (o *object) toolChoice(name string, haveTools bool) ToolChoice {
	n, ok := o.Nodes[name]
	switch {
	case !ok && haveTools:
		return ToolChoice{Kind: ToolChoiceAuto}
	case !ok:
		return ToolChoice{Kind: ToolChoiceNone}
	}
	o.namedToolChoiceType(name, n)
	return toolChoiceOf(n)
}

// documents is `documents: list[dict[str, str]] | None`: the list's tree.
func (o *object) documents(name string) *wire.Node {
	items, ok := o.ListNodes(name, false)
	if !ok {
		return nil
	}
	valid := true
	for i, item := range items {
		if item.Kind != wire.Object {
			o.Fail(o.At(name, i), "dict_type", "Input should be a valid dictionary", item.Raw)
			valid = false
			continue
		}
		for k, key := range item.Keys {
			if v := item.Vals[k]; v.Kind != wire.String {
				o.Fail(o.At(name, i, key), "string_type", "Input should be a valid string", v.Raw)
				valid = false
			}
		}
	}
	if !valid {
		return nil
	}
	return o.Node(name)
}

// structuredOutputs is `structured_outputs: StructuredOutputsParams | None`.
func (o *object) structuredOutputs(name string) *StructuredOutputsParams {
	sub, raw := o.Nested(name, true, "StructuredOutputsParams")
	if sub == nil {
		return nil
	}
	so := &StructuredOutputsParams{}
	if j := sub.Node("json"); !j.IsNull() {
		if j.Kind != wire.String && j.Kind != wire.Object {
			sub.Fail(sub.At("json", "str"), "string_type", "Input should be a valid string", j.Raw)
			sub.Fail(sub.At("json", "dict[any,any]"), "dict_type", "Input should be a valid dictionary", j.Raw)
		} else {
			so.JSON = j
		}
	}
	so.Regex = sub.OptionalString("regex")
	if items, ok := sub.ListNodes("choice", false); ok {
		so.Choice = make([]string, 0, len(items))
		for i, item := range items {
			s, ok := item.Text()
			if !ok {
				sub.Fail(sub.At("choice", i), "string_type", "Input should be a valid string", item.Raw)
			}
			so.Choice = append(so.Choice, s)
		}
	}
	so.Grammar = sub.OptionalString("grammar")
	if _, ok := sub.Member("json_object"); ok {
		so.JSONObject = sub.OptionalBool("json_object", false)
	}
	so.DisableAnyWhitespace = sub.Bool("disable_any_whitespace", false)
	so.DisableAdditionalProperties = sub.Bool("disable_additional_properties", false)
	so.WhitespacePattern = sub.OptionalString("whitespace_pattern")
	so.StructuralTag = sub.OptionalString("structural_tag")
	if len(sub.Errs) > 0 {
		o.Errs = append(o.Errs, sub.Errs...)
		return nil
	}
	if n := so.constraintCount(); n != 1 {
		msg := "You must use one kind of structured outputs constraint but none are specified: " + so.dictRepr()
		if n > 1 {
			msg = "You can only use one kind of structured outputs constraint but multiple are specified: " + so.dictRepr()
		}
		o.Fail(o.At(name), "value_error", "Value error, "+msg, raw,
			pylax.CtxEntry{Key: "error", Value: pylax.PyException{Class: "ValueError", Message: msg}})
		return nil
	}
	return so
}

// vllmXargs is `vllm_xargs: dict[str, str | int | float | list[str | int |
// float]] | None`: the object's tree.
func (o *object) vllmXargs(name string) *wire.Node {
	n := o.OptionalDictNode(name)
	if n == nil {
		return nil
	}
	scalar := func(v *wire.Node) bool {
		k := pylax.Kind(v.Raw) // NaN and Infinity are no numbers here
		return k == '"' || k == '-' || pylax.IsDigit(k)
	}
	valid := true
	for i, key := range n.Keys {
		v := n.Vals[i]
		if scalar(v) {
			continue
		}
		if v.Kind == wire.Array {
			ok := true
			for _, it := range v.Arr {
				ok = ok && scalar(it)
			}
			if ok {
				continue
			}
		}
		o.Fail(o.At(name, key), "union_type", "Input should be a valid string, integer, number or list", v.Raw)
		valid = false
	}
	if !valid {
		return nil
	}
	return n
}

// repetitionDetection is `repetition_detection: RepetitionDetectionParams |
// None`, returned as the dataclass serialises: all three fields.
func (o *object) repetitionDetection(name string) json.RawMessage {
	sub, raw := o.Nested(name, true, "RepetitionDetectionParams")
	if sub == nil {
		return nil
	}
	maxSize := sub.Int("max_pattern_size", 0)
	minSize := sub.Int("min_pattern_size", 0)
	minCount := sub.Int("min_count", 0)
	if len(sub.Errs) > 0 {
		o.Errs = append(o.Errs, sub.Errs...)
		return nil
	}
	var msg string
	switch {
	case maxSize < 0 || minSize < 0 || minSize > maxSize:
		msg = "max_pattern_size, min_pattern_size must be >=0, with min_pattern_size <= max_pattern_size. " +
			"Set both to 0 to disable repetitive pattern detection."
	case maxSize > 0 && minCount < 2:
		msg = "min_count must be >= 2 to detect repetitive patterns in engine output. " +
			"If you do not wish to detect repetitive patterns, set max_pattern_size to 0."
	}
	if msg != "" {
		o.Fail(o.At(name), "value_error", "Value error, "+msg, raw,
			pylax.CtxEntry{Key: "error", Value: pylax.PyException{Class: "ValueError", Message: msg}})
		return nil
	}
	return json.RawMessage(fmt.Sprintf(`{"max_pattern_size":%d,"min_pattern_size":%d,"min_count":%d}`, maxSize, minSize, minCount))
}

// LogitBiasField, StructuredOutputsField and VLLMXargsField read members
// another API's request shares with chat (Responses validates them in its
// own declaration order, then hands them on raw to the chat request).
func LogitBiasField(o *pylax.Object, name string) []LogitBiasEntry {
	return (&object{o}).logitBias(name)
}

// StructuredOutputsField: see LogitBiasField.
func StructuredOutputsField(o *pylax.Object, name string) *StructuredOutputsParams {
	return (&object{o}).structuredOutputs(name)
}

// VLLMXargsField: see LogitBiasField.
func VLLMXargsField(o *pylax.Object, name string) *wire.Node {
	return (&object{o}).vllmXargs(name)
}
