package responses

import (
	"bytes"
	"encoding/json"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
)

// The ResponsesRequest members typed by vLLM itself rather than by OpenAI.
var (
	responsesInclude = nullable(&schemaNode{K: "list", Items: literal(
		"code_interpreter_call.outputs", "computer_call_output.output.image_url", "file_search_call.results",
		"message.input_image.image_url", "message.output_text.logprobs", "reasoning.encrypted_content")})
	responsesServiceTier = literal("auto", "default", "flex", "scale", "priority")
)

// toolsSchema is `tools: list[Tool]` with a default: null is not a list.
// Built on use, so that the OpenAI schemas are read on the first Responses
// request rather than when the package loads.
func toolsSchema() *schemaNode { return &schemaNode{K: "list", Items: openaiType("Tool")} }

func literal(values ...string) *schemaNode {
	expected := literalExpected(values)
	return &schemaNode{K: "literal", Values: values, expected: expected, literalMsg: "Input should be " + expected}
}

func nullable(n *schemaNode) *schemaNode { return &schemaNode{K: "nullable", S: n} }

// penalty is `name: float | None = Field(None, ge=-2.0, le=2.0)`, as
// ResponsesRequest declares presence_penalty and frequency_penalty (chat
// leaves their range to SamplingParams).
func (o *object) penalty(name string) {
	v := o.OptionalFloat(name, nil)
	switch {
	case v == nil:
	case *v < -2:
		o.Fail(o.At(name), "greater_than_equal", "Input should be greater than or equal to -2", o.Nodes[name].Raw,
			pylax.CtxEntry{Key: "ge", Value: -2.0})
	case *v > 2:
		o.Fail(o.At(name), "less_than_equal", "Input should be less than or equal to 2", o.Nodes[name].Raw,
			pylax.CtxEntry{Key: "le", Value: 2.0})
	}
}

// validateNode validates member name, when present, against schema n; ok
// is false when it recorded errors.
func (o *object) validateNode(name string, n *schemaNode) bool {
	v := o.Nodes[name]
	if v == nil {
		return true
	}
	s := o.sink()
	n.validate(v, o.locOf(name), s)
	return o.absorb(s)
}

// sink is an errSink that builds as many errors as vLLM's message can
// still show after o's.
func (o *object) sink() *errSink {
	keep := pylax.MaxReportedErrors - len(o.Errs)
	if o.Omitted > 0 || keep < 0 {
		keep = 0
	}
	return &errSink{keep: keep}
}

// absorb adds s's errors to o's; ok is false when there were any.
func (o *object) absorb(s *errSink) bool {
	o.Errs = append(o.Errs, s.errs...)
	o.Omitted += s.omitted
	return len(s.errs) == 0 && s.omitted == 0
}

// locOf is member name's location as a locPath root.
func (o *object) locOf(name string) *locPath { return &locPath{base: o.At(name)} }

// responsesInput is `input: str | list[ResponseInputOutputItem]` after
// input_item_parsing. The union fails as a whole: a list with a bad item
// also reports that it is not a string. Each item is read into its typed
// value (inputItemOf) in the same walk.
func (o *object) responsesInput(r *Request) {
	v := o.Nodes["input"]
	if v == nil {
		o.Missing("input")
		return
	}
	loc := o.At("input")
	switch v.Kind {
	case wire.String:
		s := v.S
		r.InputText = &s
		return
	case wire.Array:
		union := openaiType("InputItem")
		items := make([]InputItem, len(v.Arr))
		prepared := make([]*wire.Node, len(v.Arr))
		ok := true
		for i, item := range v.Arr {
			items[i] = inputItemOf(item)
			if p, accepted := prepareInputItem(item); !accepted {
				prepared[i] = p
				ok = ok && union.valid(p)
			}
		}
		if ok {
			r.InputItems = items
			return
		}
		o.Fail(loc, "string_type", "Input should be a valid string", v.Raw)
		s := o.sink()
		for i, p := range prepared {
			if p != nil {
				union.validate(p, s.atIndex(&locPath{base: loc}, i), s)
			}
		}
		o.absorb(s)
		return
	}
	o.Fail(loc, "string_type", "Input should be a valid string", v.Raw)
	o.Fail(loc, "list_type", "Input should be a valid list", v.Raw)
}

// prepareInputItem is one input item as it reaches pydantic's validation of
// ResponseInputItemParam | ResponseOutputItem after input_item_parsing: a
// reasoning item without an id has been given one, and an assistant message
// with list content that makes a valid ResponseOutputMessage once given an
// id, a status and annotations has become one (accepted: nothing is left to
// validate).
func prepareInputItem(item *wire.Node) (prepared *wire.Node, accepted bool) {
	if item.Kind != wire.Object {
		return item, false
	}
	typ, _ := item.Get("type")
	isType := func(s string) bool { return typ != nil && typ.Kind == wire.String && typ.S == s }
	switch {
	case isType("reasoning"):
		if _, ok := item.Get("id"); !ok {
			// vLLM's is rs_<uuid>; any string fits, and errors show the
			// item only as "<dict of N items>".
			return withMember(item, "id", stringNode("rs_")), false
		}
	case isType("message"):
		role, _ := item.Get("role")
		content, _ := item.Get("content")
		if role != nil && role.Kind == wire.String && role.S == "assistant" && content != nil && content.Kind == wire.Array {
			if openaiType("ResponseOutputMessage").valid(asOutputMessage(item, content)) {
				return item, true
			}
		}
	}
	return item, false
}

// asOutputMessage is input_item_parsing's completion of an assistant
// message: an id and status when absent, and empty annotations on
// output_text parts without them.
func asOutputMessage(item, content *wire.Node) *wire.Node {
	if _, ok := item.Get("id"); !ok {
		item = withMember(item, "id", stringNode("msg_"))
	}
	if _, ok := item.Get("status"); !ok {
		item = withMember(item, "status", stringNode("completed"))
	}
	parts := &wire.Node{Kind: wire.Array, Arr: make([]*wire.Node, len(content.Arr)), Raw: content.Raw}
	for i, c := range content.Arr {
		parts.Arr[i] = c
		if c.Kind != wire.Object {
			continue
		}
		t, _ := c.Get("type")
		if _, has := c.Get("annotations"); !has && t != nil && t.Kind == wire.String && t.S == "output_text" {
			parts.Arr[i] = withMember(c, "annotations", &wire.Node{Kind: wire.Array, Raw: []byte("[]")})
		}
	}
	return withMember(item, "content", parts)
}

// withMember is a shallow copy of object n with key set to v (appended when
// new, as a dict assignment does), its Raw rewritten to match: an error's
// input shows the item pydantic was given.
func withMember(n *wire.Node, key string, v *wire.Node) *wire.Node {
	c := *n
	c.Keys = append([]string(nil), n.Keys...)
	c.Vals = append([]*wire.Node(nil), n.Vals...)
	replaced := false
	for i, k := range c.Keys {
		if k == key {
			c.Vals[i] = v
			replaced = true
		}
	}
	if !replaced {
		c.Keys = append(c.Keys, key)
		c.Vals = append(c.Vals, v)
	}
	raw := []byte{'{'}
	for i, k := range c.Keys {
		if i > 0 {
			raw = append(raw, ',')
		}
		raw = wire.AppendString(raw, k)
		raw = append(raw, ':')
		raw = append(raw, c.Vals[i].Raw...)
	}
	c.Raw = append(raw, '}')
	return &c
}

// stringNode is a JSON string value built by code.
func stringNode(s string) *wire.Node {
	return &wire.Node{Kind: wire.String, S: s, Raw: wire.AppendString(nil, s)}
}

// responsesModelValidators runs ResponsesRequest's before-validators in
// pydantic's order, the last declared first (check_tool_usage,
// check_cache_salt_support, validate_prompt, validate_background;
// input_item_parsing only prepares items, see validateInputItem), and
// returns the first failure. When they pass, obj.raw is the body as they
// left it, which the fields' "missing" errors show.
func responsesModelValidators(obj *object) *pylax.FieldError {
	input := obj.Raw
	vErr := func(msg, param string) *pylax.FieldError {
		fe := obj.ValidatorError("VLLMValidationError", msg, param, "")
		fe.Input = input
		return fe
	}
	if fe := checkResponsesToolUsage(obj, vErr); fe != nil {
		return fe
	}
	if _, ok := obj.Nodes["tool_choice"]; !ok && !responsesHasTools(obj) {
		// check_tool_usage stored tool_choice "none": the later
		// validators' errors show a body with one more member.
		input = withToolChoiceNone(obj.Raw)
	}
	if cs := obj.Nodes["cache_salt"]; !cs.IsNull() {
		if s, isStr := cs.Text(); !isStr || s == "" {
			return vErr("Parameter 'cache_salt' must be a non-empty string if provided.", "cache_salt")
		}
	}
	if p := obj.Nodes["prompt"]; !p.IsNull() {
		return vErr("prompt template is not supported", "prompt")
	}
	if bg, ok := obj.Nodes["background"]; ok && pylax.TruthyNode(bg) {
		if st, ok := obj.Nodes["store"]; ok && !pylax.TruthyNode(st) {
			return vErr("background can only be used when `store` is true", "background")
		}
	}
	obj.Raw = input
	return nil
}

// withToolChoiceNone is the JSON object raw with "tool_choice":"none" added.
func withToolChoiceNone(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimRight(raw, " \t\r\n")
	body := bytes.TrimRight(raw[:len(raw)-1], " \t\r\n")
	out := append([]byte(nil), body...)
	if body[len(body)-1] != '{' {
		out = append(out, ',')
	}
	return append(out, `"tool_choice":"none"}`...)
}

// responsesHasTools is check_tool_usage's has_tools: tools present, not
// null and not empty.
func responsesHasTools(obj *object) bool {
	tools := obj.Nodes["tools"]
	return !tools.IsNull() && pylax.TruthyNode(tools)
}

// checkResponsesToolUsage is ResponsesRequest.check_tool_usage on the raw
// body: without tools, "required" or a named function is refused; a named
// function must name one of the tools (a namespace tool's members count
// bare and as "namespace__name").
func checkResponsesToolUsage(obj *object, vErr func(msg, param string) *pylax.FieldError) *pylax.FieldError {
	tools := obj.Nodes["tools"]
	hasTools := responsesHasTools(obj)
	choice := obj.Nodes["tool_choice"]
	var named *wire.Node
	if choice != nil && choice.Kind == wire.Object {
		if t, ok := choice.Get("type"); ok && t.Kind == wire.String && t.S == "function" {
			named = choice
		}
	}
	notFound := "Tool choice 'function' not found in 'tools' parameter."
	if !hasTools {
		switch {
		case choice != nil && choice.Kind == wire.String && choice.S == "required":
			return vErr("Tool choice 'required' must be specified with 'tools' parameter.", "tool_choice")
		case named != nil:
			return vErr(notFound, "tool_choice")
		}
		return nil
	}
	if named == nil {
		return nil
	}
	name, _ := named.Get("name")
	// Iterating a string or object yields no tool with a name.
	if name == nil || name.Kind != wire.String || name.S == "" || tools.Kind != wire.Array {
		return vErr(notFound, "tool_choice")
	}
	for _, t := range tools.Arr {
		if t.Kind != wire.Object {
			continue
		}
		tn, _ := t.Get("name")
		if typ, _ := t.Get("type"); typ != nil && typ.Kind == wire.String && typ.S == "namespace" {
			inner, _ := t.Get("tools")
			if inner == nil || inner.Kind != wire.Array {
				continue
			}
			for _, m := range inner.Arr {
				mn, _ := m.Get("name")
				if mn == nil || mn.Kind != wire.String {
					continue
				}
				if mn.S == name.S || (tn != nil && tn.Kind == wire.String && tn.S+"__"+mn.S == name.S) {
					return nil
				}
			}
			continue
		}
		if tn != nil && tn.Kind == wire.String && tn.S == name.S {
			return nil
		}
	}
	return vErr(notFound, "tool_choice")
}
