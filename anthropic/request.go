package anthropic

import (
	"encoding/json"
	"math/big"

	"github.com/vrender/vrender/internal/pylax"
)

// MessagesRequest is the body of POST /v1/messages/render (and of
// Anthropic's /v1/messages): vLLM's AnthropicMessagesRequest
// (vllm/entrypoints/anthropic/protocol.py). Members that the conversion to
// a chat request copies verbatim are kept as raw JSON, in request order.
type MessagesRequest struct {
	Model         string
	Messages      []Message
	MaxTokens     int
	Metadata      json.RawMessage
	OutputConfig  *OutputConfig
	StopSequences []string // nil when absent or null
	Stream        bool
	// System is a string (SystemText) or a list of blocks (SystemBlocks).
	SystemText       *string
	SystemBlocks     []ContentBlock
	Temperature      json.RawMessage // a float or nil
	ToolChoice       *ToolChoice
	Tools            []Tool
	HaveTools        bool // tools was a list (possibly empty), not absent or null
	TopK             json.RawMessage
	TopP             json.RawMessage
	KVTransferParams json.RawMessage
	ECTransferParams json.RawMessage
	ChatTemplateArgs json.RawMessage // chat_template_kwargs
	VLLMXargs        json.RawMessage // vllm_xargs, checked by the chat request
}

// Message is one input message; Content is a string (Text) or a
// list of blocks (Blocks).
type Message struct {
	Role   string // "user", "assistant" or "system" (after vLLM's role map)
	Text   *string
	Blocks []ContentBlock
}

// ContentBlock is vLLM's flat AnthropicContentBlock: one struct for
// every block type, unset members nil.
type ContentBlock struct {
	Type      string
	Text      *string
	Source    json.RawMessage // an object or nil
	ID        *string
	ToolUseID *string
	Name      *string
	Input     json.RawMessage // an object or nil
	// Content is a string (ContentText) or a list of objects (ContentList).
	ContentText *string
	ContentList []json.RawMessage
	Thinking    *string
}

// Tool is a tool definition; InputSchema has "type": "object"
// appended when it had no "type", as vLLM's validator does.
type Tool struct {
	Name         string
	Description  *string
	InputSchema  json.RawMessage
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
	FormatType string          // "json_schema" when a format was given
	Schema     json.RawMessage // format.schema, or nil
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
	if raw, ok := obj.Members["max_tokens"]; ok {
		if n, ok := obj.CheckedInt(obj.At("max_tokens"), raw, nil, nil); ok {
			if n.Cmp(big.NewInt(0)) <= 0 {
				obj.fieldValueError("max_tokens", "max_tokens must be positive", raw)
			}
			r.MaxTokens = pylax.ClampInt(n)
		}
	} else {
		obj.Missing("max_tokens")
	}
	r.Metadata = obj.OptionalDict("metadata")
	r.OutputConfig = obj.anthropicOutputConfig("output_config")
	if raw, ok := obj.Members["stop_sequences"]; ok && !pylax.IsNull(raw) {
		r.StopSequences = obj.StringList("stop_sequences", nil)
	}
	if s := obj.OptionalBool("stream", false); s != nil {
		r.Stream = *s
	}
	obj.anthropicSystem(r)
	if obj.OptionalFloat("temperature", nil) != nil {
		r.Temperature = obj.Members["temperature"]
	}
	obj.anthropicTools(r)
	if obj.OptionalInt("top_k", nil, nil, nil) != nil {
		r.TopK = obj.Members["top_k"]
	}
	if obj.OptionalFloat("top_p", nil) != nil {
		r.TopP = obj.Members["top_p"]
	}
	r.KVTransferParams = obj.OptionalDict("kv_transfer_params")
	r.ECTransferParams = obj.OptionalDict("ec_transfer_params")
	r.ChatTemplateArgs = obj.OptionalDict("chat_template_kwargs")
	r.VLLMXargs = obj.OptionalDict("vllm_xargs")
	if len(obj.Errs) > 0 {
		return nil, &pylax.ValidationError{Errors: obj.Errs}
	}
	return r, nil
}

// anthropicModelMessages validates model (non-empty) and messages.
func (o *object) anthropicModelMessages(r *MessagesRequest) {
	if raw, ok := o.Members["model"]; ok {
		r.Model = o.RequiredString("model")
		if len(o.Errs) == 0 && r.Model == "" {
			o.fieldValueError("model", "Model is required", raw)
		}
	} else {
		o.Missing("model")
	}
	if items, ok := o.List("messages", true); ok {
		for i, item := range items {
			if m, ok := o.anthropicMessage(i, item); ok {
				r.Messages = append(r.Messages, m)
			}
		}
	}
}

// anthropicSystem validates system: a string or text blocks.
func (o *object) anthropicSystem(r *MessagesRequest) {
	if raw, ok := o.Members["system"]; ok && !pylax.IsNull(raw) {
		var list bool
		if r.SystemText, list = o.strOrList("system", raw); list {
			r.SystemBlocks = o.anthropicBlocks(o.At("system"), raw)
		}
	}
}

// anthropicTools validates tool_choice and tools.
func (o *object) anthropicTools(r *MessagesRequest) {
	r.ToolChoice = o.anthropicToolChoice("tool_choice")
	if items, ok := o.List("tools", false); ok {
		r.HaveTools = true
		for i, item := range items {
			if t, ok := o.anthropicTool(i, item); ok {
				r.Tools = append(r.Tools, t)
			}
		}
	}
}

// fieldValueError is pydantic's error for a field validator that raised
// ValueError(msg) on the value raw.
func (o *object) fieldValueError(name, msg string, raw json.RawMessage) {
	o.Fail(o.At(name), "value_error", "Value error, "+msg, raw,
		pylax.CtxEntry{Key: "error", Value: pylax.PyException{Class: "ValueError", Message: msg}})
}

// anthropicMessage validates messages[i]: role (Claude Code's "ctx" and
// "msg" read as "user", as vLLM's before-validator maps them) and content.
func (o *object) anthropicMessage(i int, raw json.RawMessage) (Message, bool) {
	m := o.listItem(o.At("messages", i), raw, "AnthropicMessage")
	if m == nil {
		return Message{}, false
	}
	before := len(o.Errs)
	var msg Message
	if rr, ok := m.Members["role"]; ok {
		if s, isStr := pylax.LaxString(rr); isStr {
			if s == "ctx" || s == "msg" {
				s = "user"
				m.Members["role"] = json.RawMessage(`"user"`)
			}
			if s == "user" || s == "assistant" || s == "system" {
				msg.Role = s
			}
		}
		m.OptionalLiteral("role", "user", "assistant", "system")
	} else {
		m.Missing("role")
	}
	if cr, ok := m.Members["content"]; ok {
		var list bool
		if msg.Text, list = m.strOrList("content", cr); list {
			msg.Blocks = m.anthropicBlocks(m.At("content"), cr)
		}
	} else {
		m.Missing("content")
	}
	o.Errs = append(o.Errs, m.Errs...)
	return msg, len(o.Errs) == before
}

// anthropicBlocks validates the list raw (at loc) as list[AnthropicContentBlock],
// the list member of a `str | list[AnthropicContentBlock]` union: when an
// item fails, pydantic reports the str member's error too.
func (o *object) anthropicBlocks(loc []any, raw json.RawMessage) []ContentBlock {
	var items []json.RawMessage
	_ = json.Unmarshal(raw, &items)
	blocks := make([]ContentBlock, 0, len(items))
	var errs []pylax.FieldError
	for i, item := range items {
		b := &object{&pylax.Object{Raw: item, Loc: append(append([]any{}, loc...), i)}}
		if pylax.Kind(item) != '{' {
			errs = append(errs, pylax.FieldError{Type: "model_type", Loc: b.Loc,
				Msg:   "Input should be a valid dictionary or instance of AnthropicContentBlock",
				Input: item, Ctx: []pylax.CtxEntry{{Key: "class_name", Value: "AnthropicContentBlock"}}})
			continue
		}
		_ = json.Unmarshal(item, &b.Members)
		var blk ContentBlock
		if t, ok := b.Members["type"]; ok {
			if s := b.OptionalLiteral("type", anthropicBlockTypes...); s != nil {
				blk.Type = *s
			} else if pylax.IsNull(t) {
				b.literalNull("type", t)
			}
		} else {
			b.Missing("type")
		}
		blk.Text = b.OptionalString("text")
		blk.Source = b.OptionalDict("source")
		blk.ID = b.OptionalString("id")
		blk.ToolUseID = b.OptionalString("tool_use_id")
		blk.Name = b.OptionalString("name")
		blk.Input = b.OptionalDict("input")
		if cr, ok := b.Members["content"]; ok && !pylax.IsNull(cr) {
			var list bool
			if blk.ContentText, list = b.strOrList("content", cr); list {
				var list []json.RawMessage
				_ = json.Unmarshal(cr, &list)
				var bad []int
				for j, e := range list {
					if pylax.Kind(e) != '{' {
						bad = append(bad, j)
					}
				}
				if len(bad) > 0 {
					b.Fail(b.At("content"), "string_type", "Input should be a valid string", cr)
					for _, j := range bad {
						b.Fail(b.At("content", j), "dict_type", "Input should be a valid dictionary", list[j])
					}
				} else {
					blk.ContentList = list
				}
			}
		}
		if raw, ok := b.Members["is_error"]; ok && !pylax.IsNull(raw) {
			b.OptionalBool("is_error", false)
		}
		b.OptionalString("tool_name")
		blk.Thinking = b.OptionalString("thinking")
		b.OptionalString("signature")
		b.OptionalString("data")
		errs = append(errs, b.Errs...)
		blocks = append(blocks, blk)
	}
	if len(errs) > 0 {
		o.Fail(loc, "string_type", "Input should be a valid string", raw)
		o.Errs = append(o.Errs, errs...)
		return nil
	}
	return blocks
}

// literalNull records the literal error pydantic gives a required Literal
// field sent as null (optionalLiteral treats null as absent).
func (o *object) literalNull(name string, raw json.RawMessage) {
	o.Members[name] = json.RawMessage(`0`)
	o.OptionalLiteral(name, anthropicBlockTypes...)
	o.Errs[len(o.Errs)-1].Input = raw
}

// listItem is the list item raw at loc as an object of model class, or nil
// after recording pydantic's error for a non-object.
func (o *object) listItem(loc []any, raw json.RawMessage, class string) *object {
	if pylax.Kind(raw) != '{' {
		o.Fail(loc, "model_type", "Input should be a valid dictionary or instance of "+class, raw,
			pylax.CtxEntry{Key: "class_name", Value: class})
		return nil
	}
	item := &object{&pylax.Object{Raw: raw, Loc: loc}}
	_ = json.Unmarshal(raw, &item.Members)
	return item
}

// strOrList reads a `str | list[...]` member: the string, or list true for
// a list the caller validates; anything else records both members' errors.
func (o *object) strOrList(name string, raw json.RawMessage) (text *string, list bool) {
	if s, ok := pylax.LaxString(raw); ok {
		return &s, false
	}
	if pylax.Kind(raw) == '[' {
		return nil, true
	}
	o.Fail(o.At(name), "string_type", "Input should be a valid string", raw)
	o.Fail(o.At(name), "list_type", "Input should be a valid list", raw)
	return nil, false
}

// anthropicTool validates tools[i].
func (o *object) anthropicTool(i int, raw json.RawMessage) (Tool, bool) {
	t := o.listItem(o.At("tools", i), raw, "AnthropicTool")
	if t == nil {
		return Tool{}, false
	}
	var tool Tool
	tool.Name = t.RequiredString("name")
	tool.Description = t.OptionalString("description")
	if s, ok := t.Members["input_schema"]; ok {
		if pylax.Kind(s) != '{' {
			t.Fail(t.At("input_schema"), "dict_type", "Input should be a valid dictionary", s)
		} else {
			tool.InputSchema = withDefaultType(s)
		}
	} else {
		t.Missing("input_schema")
	}
	if raw, ok := t.Members["strict"]; ok && !pylax.IsNull(raw) {
		t.OptionalBool("strict", false)
	}
	if raw, ok := t.Members["defer_loading"]; ok && !pylax.IsNull(raw) {
		tool.DeferLoading = t.OptionalBool("defer_loading", false)
	}
	o.Errs = append(o.Errs, t.Errs...)
	return tool, len(t.Errs) == 0
}

// withDefaultType appends "type": "object" to a schema without "type", as
// vLLM's validate_input_schema does (a new dict key goes last).
func withDefaultType(schema json.RawMessage) json.RawMessage {
	var members map[string]json.RawMessage
	if json.Unmarshal(schema, &members) != nil {
		return schema
	}
	if _, ok := members["type"]; ok {
		return schema
	}
	trimmed := trimSpace(schema)
	body := trimmed[:len(trimmed)-1] // drop the closing brace
	out := make([]byte, 0, len(schema)+18)
	out = append(out, body...)
	if len(members) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"type":"object"}`...)
	return out
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// anthropicToolChoice validates tool_choice, with vLLM's after-validator:
// a "tool" choice needs a name.
func (o *object) anthropicToolChoice(name string) *ToolChoice {
	sub, raw := o.Nested(name, false, "AnthropicToolChoice")
	if sub == nil {
		return nil
	}
	tc := &ToolChoice{}
	if _, ok := sub.Members["type"]; ok {
		if s := sub.OptionalLiteral("type", "auto", "any", "tool", "none"); s != nil {
			tc.Type = *s
		}
	} else {
		sub.Missing("type")
	}
	tc.Name = sub.OptionalString("name")
	if len(sub.Errs) > 0 {
		o.Errs = append(o.Errs, sub.Errs...)
		return nil
	}
	if tc.Type == "tool" && (tc.Name == nil || *tc.Name == "") {
		const msg = "tool_choice.name is required when type is 'tool'"
		o.Fail(o.At(name), "value_error", "Value error, "+msg, raw,
			pylax.CtxEntry{Key: "error", Value: pylax.PyException{Class: "ValueError", Message: msg}})
		return nil
	}
	return tc
}

// anthropicOutputConfig validates output_config.
func (o *object) anthropicOutputConfig(name string) *OutputConfig {
	sub, _ := o.Nested(name, false, "AnthropicOutputConfig")
	if sub == nil {
		return nil
	}
	oc := &OutputConfig{Effort: sub.OptionalLiteral("effort", "low", "medium", "high", "xhigh", "max")}
	if f, _ := sub.Nested("format", false, "AnthropicJsonOutputFormat"); f != nil {
		oc.Schema = f.OptionalDict("schema")
		oc.FormatType = "json_schema"
		f.OptionalLiteral("type", "json_schema")
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
