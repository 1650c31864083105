package anthropic

import (
	"math/big"
	"slices"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
)

// MessagesRequest is the body of POST /v1/messages/render (and of
// Anthropic's /v1/messages): vLLM's AnthropicMessagesRequest
// (vllm/entrypoints/anthropic/protocol.py), decoded once. Fields that the
// conversion to a chat request hands on as sent are the body's trees:
// the sampling members as the client spelt them, because the chat request
// validates them again as vLLM's constructor does.
type MessagesRequest struct {
	Model         string
	Messages      []Message
	MaxTokens     int
	Metadata      *wire.Node // an object or nil
	OutputConfig  *OutputConfig
	StopSequences []string // nil when absent or null
	Stream        bool
	// System is a string (SystemText) or a list of blocks (SystemBlocks).
	SystemText       *string
	SystemBlocks     []ContentBlock
	Temperature      *wire.Node // a float or nil
	ToolChoice       *ToolChoice
	Tools            []Tool
	HaveTools        bool       // tools was a list (possibly empty), not absent or null
	TopK             *wire.Node // an int or nil
	TopP             *wire.Node // a float or nil
	KVTransferParams *wire.Node // objects or nil, from here on
	ECTransferParams *wire.Node
	ChatTemplateArgs *wire.Node // chat_template_kwargs
	VLLMXargs        *wire.Node // vllm_xargs, checked by the chat request
}

// Message is one input message; Content is a string (Text) or a
// list of blocks (Blocks).
type Message struct {
	Role   string // "user", "assistant" or "system" (after vLLM's role map)
	Text   *string
	Blocks []ContentBlock
}

// ContentBlock is vLLM's flat AnthropicContentBlock: one struct for
// every block type, unset members nil. Source and Input are dicts of any
// values in vLLM too, kept as their trees.
type ContentBlock struct {
	Type      string
	Text      *string
	Source    *wire.Node // an object or nil
	ID        *string
	ToolUseID *string
	Name      *string
	Input     *wire.Node // an object or nil
	// Content is a string (ContentText) or a list of objects (ContentList).
	ContentText *string
	ContentList []*wire.Node
	Thinking    *string
}

// Tool is a tool definition; InputSchema has "type": "object"
// appended when it had no "type", as vLLM's validator does.
type Tool struct {
	Name         string
	Description  *string
	InputSchema  *wire.Node // an object
	DeferLoading *bool
}

// ToolChoice is tool_choice: auto, any, tool (with Name) or none.
type ToolChoice struct {
	Type string
	Name *string
}

// OutputConfig is output_config: the effort and a JSON schema
// output format.
type OutputConfig struct {
	Effort     *string
	FormatType string     // "json_schema" when a format was given
	Schema     *wire.Node // format.schema (an object), or nil
}

var anthropicBlockTypes = []string{"text", "image", "tool_use", "tool_result", "tool_reference", "thinking", "redacted_thinking"}

// DecodeMessagesRequest validates a Messages body as vLLM's
// pydantic model does, fields in declaration order. Errors are
// *ValidationError.
func DecodeMessagesRequest(data []byte) (*MessagesRequest, error) {
	obj, fe := decodeBody(data, "AnthropicMessagesRequest")
	if fe != nil {
		return nil, &pylax.ValidationError{Errors: []pylax.FieldError{*fe}}
	}
	r := &MessagesRequest{}
	obj.anthropicModelMessages(r)
	if n := obj.Nodes["max_tokens"]; n != nil {
		if v, ok := obj.CheckedInt(obj.At("max_tokens"), n.Raw, nil, nil); ok {
			if v.Cmp(big.NewInt(0)) <= 0 {
				obj.fieldValueError("max_tokens", "max_tokens must be positive", n)
			}
			r.MaxTokens = pylax.ClampInt(v)
		}
	} else {
		obj.Missing("max_tokens")
	}
	r.Metadata = obj.OptionalDictNode("metadata")
	r.OutputConfig = obj.anthropicOutputConfig("output_config")
	if n := obj.Nodes["stop_sequences"]; n != nil && !n.IsNull() {
		r.StopSequences = obj.StringList("stop_sequences", nil)
	}
	if s := obj.OptionalBool("stream", false); s != nil {
		r.Stream = *s
	}
	obj.anthropicSystem(r)
	if obj.OptionalFloat("temperature", nil) != nil {
		r.Temperature = obj.Nodes["temperature"]
	}
	obj.anthropicTools(r)
	if obj.OptionalInt("top_k", nil, nil, nil) != nil {
		r.TopK = obj.Nodes["top_k"]
	}
	if obj.OptionalFloat("top_p", nil) != nil {
		r.TopP = obj.Nodes["top_p"]
	}
	r.KVTransferParams = obj.OptionalDictNode("kv_transfer_params")
	r.ECTransferParams = obj.OptionalDictNode("ec_transfer_params")
	r.ChatTemplateArgs = obj.OptionalDictNode("chat_template_kwargs")
	r.VLLMXargs = obj.OptionalDictNode("vllm_xargs")
	if len(obj.Errs) > 0 {
		return nil, &pylax.ValidationError{Errors: obj.Errs}
	}
	return r, nil
}

// anthropicModelMessages validates model (non-empty) and messages.
func (o *object) anthropicModelMessages(r *MessagesRequest) {
	if n := o.Nodes["model"]; n != nil {
		r.Model = o.RequiredString("model")
		if len(o.Errs) == 0 && r.Model == "" {
			o.fieldValueError("model", "Model is required", n)
		}
	} else {
		o.Missing("model")
	}
	if items, ok := o.ListNodes("messages", true); ok {
		for i, item := range items {
			if m, ok := o.anthropicMessage(i, item); ok {
				r.Messages = append(r.Messages, m)
			}
		}
	}
}

// anthropicSystem validates system: a string or text blocks.
func (o *object) anthropicSystem(r *MessagesRequest) {
	if n := o.Nodes["system"]; n != nil && !n.IsNull() {
		var list bool
		if r.SystemText, list = o.strOrList("system", n); list {
			r.SystemBlocks = o.anthropicBlocks(o.At("system"), n)
		}
	}
}

// anthropicTools validates tool_choice and tools.
func (o *object) anthropicTools(r *MessagesRequest) {
	r.ToolChoice = o.anthropicToolChoice("tool_choice")
	if items, ok := o.ListNodes("tools", false); ok {
		r.HaveTools = true
		for i, item := range items {
			if t, ok := o.anthropicTool(i, item); ok {
				r.Tools = append(r.Tools, t)
			}
		}
	}
}

// fieldValueError is pydantic's error for a field validator that raised
// ValueError(msg) on the value n.
func (o *object) fieldValueError(name, msg string, n *wire.Node) {
	o.Fail(o.At(name), "value_error", "Value error, "+msg, n.Raw,
		pylax.CtxEntry{Key: "error", Value: pylax.PyException{Class: "ValueError", Message: msg}})
}

// anthropicMessage validates messages[i]: role (Claude Code's "ctx" and
// "msg" read as "user", as vLLM's before-validator maps them) and content.
func (o *object) anthropicMessage(i int, n *wire.Node) (Message, bool) {
	item := o.ItemObject(o.At("messages", i), n, "AnthropicMessage")
	if item == nil {
		return Message{}, false
	}
	m := &object{item}
	before := len(o.Errs)
	var msg Message
	if role := m.Nodes["role"]; role == nil {
		m.Missing("role")
	} else if role.Kind == wire.String && (role.S == "ctx" || role.S == "msg") {
		msg.Role = "user" // valid as mapped
	} else if s := m.literal("role", "user", "assistant", "system"); s != nil {
		msg.Role = *s
	}
	if c := m.Nodes["content"]; c != nil {
		var list bool
		if msg.Text, list = m.strOrList("content", c); list {
			msg.Blocks = m.anthropicBlocks(m.At("content"), c)
		}
	} else {
		m.Missing("content")
	}
	o.Errs = append(o.Errs, m.Errs...)
	return msg, len(o.Errs) == before
}

// anthropicBlocks validates the list n (at loc) as list[AnthropicContentBlock],
// the list member of a `str | list[AnthropicContentBlock]` union: when an
// item fails, pydantic reports the str member's error too.
func (o *object) anthropicBlocks(loc []any, n *wire.Node) []ContentBlock {
	blocks := make([]ContentBlock, 0, len(n.Arr))
	var errs []pylax.FieldError
	for i, item := range n.Arr {
		bloc := append(append([]any{}, loc...), i)
		if item.Kind != wire.Object {
			errs = append(errs, pylax.FieldError{Type: "model_type", Loc: bloc,
				Msg:   "Input should be a valid dictionary or instance of AnthropicContentBlock",
				Input: item.Raw, Ctx: []pylax.CtxEntry{{Key: "class_name", Value: "AnthropicContentBlock"}}})
			continue
		}
		b := &object{pylax.ObjectAt(item, bloc)}
		blocks = append(blocks, b.anthropicBlock())
		errs = append(errs, b.Errs...)
	}
	if len(errs) > 0 {
		o.Fail(loc, "string_type", "Input should be a valid string", n.Raw)
		o.Errs = append(o.Errs, errs...)
		return nil
	}
	return blocks
}

// anthropicBlock validates one content block's members.
func (o *object) anthropicBlock() ContentBlock {
	var blk ContentBlock
	if o.Nodes["type"] == nil {
		o.Missing("type")
	} else if s := o.literal("type", anthropicBlockTypes...); s != nil {
		blk.Type = *s
	}
	blk.Text = o.OptionalString("text")
	blk.Source = o.OptionalDictNode("source")
	blk.ID = o.OptionalString("id")
	blk.ToolUseID = o.OptionalString("tool_use_id")
	blk.Name = o.OptionalString("name")
	blk.Input = o.OptionalDictNode("input")
	if c := o.Nodes["content"]; c != nil && !c.IsNull() {
		var list bool
		if blk.ContentText, list = o.strOrList("content", c); list {
			blk.ContentList = o.dictList("content", c)
		}
	}
	if n := o.Nodes["is_error"]; n != nil && !n.IsNull() {
		o.OptionalBool("is_error", false)
	}
	o.OptionalString("tool_name")
	blk.Thinking = o.OptionalString("thinking")
	o.OptionalString("signature")
	o.OptionalString("data")
	return blk
}

// dictList validates the list n, member name, as the list member of a
// `str | list[dict[str, Any]]` union: its items, or nil after recording
// both members' errors when one is not a dict.
func (o *object) dictList(name string, n *wire.Node) []*wire.Node {
	first := true
	for j, e := range n.Arr {
		if e.Kind == wire.Object {
			continue
		}
		if first {
			o.Fail(o.At(name), "string_type", "Input should be a valid string", n.Raw)
			first = false
		}
		o.Fail(o.At(name, j), "dict_type", "Input should be a valid dictionary", e.Raw)
	}
	if !first {
		return nil
	}
	return n.Arr
}

// literal is a Literal member that is not Optional (absent: nil, for the
// caller's default or missing error): null is refused as any other value
// outside the literal is, where OptionalLiteral reads it as absent.
func (o *object) literal(name string, values ...string) *string {
	if n := o.Nodes[name]; n != nil && n.IsNull() {
		o.literalNull(name, n, values...)
		return nil
	}
	return o.OptionalLiteral(name, values...)
}

// literalNull records the literal error pydantic gives a required Literal
// field sent as null: the error for any other non-string, with the null as
// its input.
func (o *object) literalNull(name string, null *wire.Node, values ...string) {
	zero := &wire.Node{Kind: wire.Number, S: "0", Raw: []byte("0")}
	probe := pylax.ObjectAt(&wire.Node{Kind: wire.Object, Keys: []string{name}, Vals: []*wire.Node{zero}}, o.Loc)
	probe.OptionalLiteral(name, values...)
	for _, fe := range probe.Errs {
		fe.Input = null.Raw
		o.Errs = append(o.Errs, fe)
	}
}

// strOrList reads a `str | list[...]` member: the string, or list true for
// a list the caller validates; anything else records both members' errors.
func (o *object) strOrList(name string, n *wire.Node) (text *string, list bool) {
	switch n.Kind {
	case wire.String:
		s := n.S
		return &s, false
	case wire.Array:
		return nil, true
	}
	o.Fail(o.At(name), "string_type", "Input should be a valid string", n.Raw)
	o.Fail(o.At(name), "list_type", "Input should be a valid list", n.Raw)
	return nil, false
}

// anthropicTool validates tools[i].
func (o *object) anthropicTool(i int, n *wire.Node) (Tool, bool) {
	t := o.ItemObject(o.At("tools", i), n, "AnthropicTool")
	if t == nil {
		return Tool{}, false
	}
	var tool Tool
	tool.Name = t.RequiredString("name")
	tool.Description = t.OptionalString("description")
	if s := t.Nodes["input_schema"]; s == nil {
		t.Missing("input_schema")
	} else if s.Kind != wire.Object {
		t.Fail(t.At("input_schema"), "dict_type", "Input should be a valid dictionary", s.Raw)
	} else {
		tool.InputSchema = withDefaultType(s)
	}
	if n := t.Nodes["strict"]; n != nil && !n.IsNull() {
		t.OptionalBool("strict", false)
	}
	if n := t.Nodes["defer_loading"]; n != nil && !n.IsNull() {
		tool.DeferLoading = t.OptionalBool("defer_loading", false)
	}
	o.Errs = append(o.Errs, t.Errs...)
	return tool, len(t.Errs) == 0
}

// withDefaultType is the object schema with "type": "object" appended when
// it has no "type", as vLLM's validate_input_schema does (a new dict key
// goes last); the text is the schema's with the member added.
func withDefaultType(schema *wire.Node) *wire.Node {
	if _, ok := schema.Get("type"); ok {
		return schema
	}
	typ := &wire.Node{Kind: wire.String, S: "object", Raw: []byte(`"object"`)}
	out := &wire.Node{Kind: wire.Object, Depth: max(schema.Depth, 1),
		Keys: append(slices.Clip(schema.Keys), "type"),
		Vals: append(slices.Clip(schema.Vals), typ)}
	if schema.Raw != nil {
		raw := make([]byte, 0, len(schema.Raw)+16)
		raw = append(raw, schema.Raw[:len(schema.Raw)-1]...) // without the closing brace
		if len(schema.Keys) > 0 {
			raw = append(raw, ',')
		}
		out.Raw = append(raw, `"type":"object"}`...)
	}
	return out
}

// anthropicToolChoice validates tool_choice, with vLLM's after-validator:
// a "tool" choice needs a name.
func (o *object) anthropicToolChoice(name string) *ToolChoice {
	nested, n := o.NestedNode(name, false, "AnthropicToolChoice")
	if nested == nil {
		return nil
	}
	sub := &object{nested}
	tc := &ToolChoice{}
	if sub.Nodes["type"] == nil {
		sub.Missing("type")
	} else if s := sub.literal("type", "auto", "any", "tool", "none"); s != nil {
		tc.Type = *s
	}
	tc.Name = sub.OptionalString("name")
	if len(sub.Errs) > 0 {
		o.Errs = append(o.Errs, sub.Errs...)
		return nil
	}
	if tc.Type == "tool" && (tc.Name == nil || *tc.Name == "") {
		o.fieldValueError(name, "tool_choice.name is required when type is 'tool'", n)
		return nil
	}
	return tc
}

// anthropicOutputConfig validates output_config.
func (o *object) anthropicOutputConfig(name string) *OutputConfig {
	sub, _ := o.NestedNode(name, false, "AnthropicOutputConfig")
	if sub == nil {
		return nil
	}
	oc := &OutputConfig{Effort: sub.OptionalLiteral("effort", "low", "medium", "high", "xhigh", "max")}
	if f, _ := sub.NestedNode("format", false, "AnthropicJsonOutputFormat"); f != nil {
		oc.Schema = f.OptionalDictNode("schema")
		oc.FormatType = "json_schema"
		(&object{f}).literal("type", "json_schema") // a default, not Optional: null is refused
		sub.Errs = append(sub.Errs, f.Errs...)
	}
	o.Errs = append(o.Errs, sub.Errs...)
	return oc
}

// object is a Messages body under validation: pylax's reader, with the
// readers of Anthropic's own members as methods.
type object struct{ *pylax.Object }

// decodeBody is pylax.DecodeBody for the Messages models.
func decodeBody(data []byte, className string) (*object, *pylax.FieldError) {
	o, fe := pylax.DecodeBody(data, className)
	if fe != nil {
		return nil, fe
	}
	return &object{o}, nil
}
