package protocol

import (
	"encoding/json"
	"math/big"
)

// AnthropicMessagesRequest is the body of POST /v1/messages/render (and of
// Anthropic's /v1/messages): vLLM's AnthropicMessagesRequest
// (vllm/entrypoints/anthropic/protocol.py). Members that the conversion to
// a chat request copies verbatim are kept as raw JSON, in request order.
type AnthropicMessagesRequest struct {
	Model         string
	Messages      []AnthropicMessage
	MaxTokens     int
	Metadata      json.RawMessage
	OutputConfig  *AnthropicOutputConfig
	StopSequences []string // nil when absent or null
	Stream        bool
	// System is a string (SystemText) or a list of blocks (SystemBlocks).
	SystemText       *string
	SystemBlocks     []AnthropicContentBlock
	Temperature      json.RawMessage // a float or nil
	ToolChoice       *AnthropicToolChoice
	Tools            []AnthropicTool
	HaveTools        bool // tools was a list (possibly empty), not absent or null
	TopK             json.RawMessage
	TopP             json.RawMessage
	KVTransferParams json.RawMessage
	ECTransferParams json.RawMessage
	ChatTemplateArgs json.RawMessage // chat_template_kwargs
	VLLMXargs        json.RawMessage // vllm_xargs, checked by the chat request
}

// AnthropicMessage is one input message; Content is a string (Text) or a
// list of blocks (Blocks).
type AnthropicMessage struct {
	Role   string // "user", "assistant" or "system" (after vLLM's role map)
	Text   *string
	Blocks []AnthropicContentBlock
}

// AnthropicContentBlock is vLLM's flat AnthropicContentBlock: one struct for
// every block type, unset members nil.
type AnthropicContentBlock struct {
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

// AnthropicTool is a tool definition; InputSchema has "type": "object"
// appended when it had no "type", as vLLM's validator does.
type AnthropicTool struct {
	Name         string
	Description  *string
	InputSchema  json.RawMessage
	DeferLoading *bool
}

// AnthropicToolChoice is tool_choice: auto, any, tool (with Name) or none.
type AnthropicToolChoice struct {
	Type string
	Name *string
}

// AnthropicOutputConfig is output_config: the effort and a JSON schema
// output format.
type AnthropicOutputConfig struct {
	Effort     *string
	FormatType string          // "json_schema" when a format was given
	Schema     json.RawMessage // format.schema, or nil
}

var anthropicBlockTypes = []string{"text", "image", "tool_use", "tool_result", "tool_reference", "thinking", "redacted_thinking"}

// DecodeAnthropicMessagesRequest validates a Messages body as vLLM's
// pydantic model does, fields in declaration order. Errors are
// *ValidationError.
func DecodeAnthropicMessagesRequest(data []byte) (*AnthropicMessagesRequest, error) {
	obj, fe := decodeBody(data, "AnthropicMessagesRequest")
	if fe != nil {
		return nil, &ValidationError{Errors: []FieldError{*fe}}
	}
	r := &AnthropicMessagesRequest{}
	obj.anthropicModelMessages(r)
	if raw, ok := obj.members["max_tokens"]; ok {
		if n, ok := obj.checkedInt(obj.at("max_tokens"), raw, nil, nil); ok {
			if n.Cmp(big.NewInt(0)) <= 0 {
				obj.fieldValueError("max_tokens", "max_tokens must be positive", raw)
			}
			r.MaxTokens = clampInt(n)
		}
	} else {
		obj.missing("max_tokens")
	}
	r.Metadata = obj.optionalDict("metadata")
	r.OutputConfig = obj.anthropicOutputConfig("output_config")
	if raw, ok := obj.members["stop_sequences"]; ok && !isNull(raw) {
		r.StopSequences = obj.stringList("stop_sequences", nil)
	}
	if s := obj.optionalBool("stream", false); s != nil {
		r.Stream = *s
	}
	obj.anthropicSystem(r)
	if obj.optionalFloat("temperature", nil) != nil {
		r.Temperature = obj.members["temperature"]
	}
	obj.anthropicTools(r)
	if obj.optionalInt("top_k", nil, nil, nil) != nil {
		r.TopK = obj.members["top_k"]
	}
	if obj.optionalFloat("top_p", nil) != nil {
		r.TopP = obj.members["top_p"]
	}
	r.KVTransferParams = obj.optionalDict("kv_transfer_params")
	r.ECTransferParams = obj.optionalDict("ec_transfer_params")
	r.ChatTemplateArgs = obj.optionalDict("chat_template_kwargs")
	r.VLLMXargs = obj.optionalDict("vllm_xargs")
	if len(obj.errs) > 0 {
		return nil, &ValidationError{Errors: obj.errs}
	}
	return r, nil
}

// anthropicModelMessages validates model (non-empty) and messages.
func (o *object) anthropicModelMessages(r *AnthropicMessagesRequest) {
	if raw, ok := o.members["model"]; ok {
		r.Model = o.requiredString("model")
		if len(o.errs) == 0 && r.Model == "" {
			o.fieldValueError("model", "Model is required", raw)
		}
	} else {
		o.missing("model")
	}
	if items, ok := o.list("messages", true); ok {
		for i, item := range items {
			if m, ok := o.anthropicMessage(i, item); ok {
				r.Messages = append(r.Messages, m)
			}
		}
	}
}

// anthropicSystem validates system: a string or text blocks.
func (o *object) anthropicSystem(r *AnthropicMessagesRequest) {
	if raw, ok := o.members["system"]; ok && !isNull(raw) {
		var list bool
		if r.SystemText, list = o.strOrList("system", raw); list {
			r.SystemBlocks = o.anthropicBlocks(o.at("system"), raw)
		}
	}
}

// anthropicTools validates tool_choice and tools.
func (o *object) anthropicTools(r *AnthropicMessagesRequest) {
	r.ToolChoice = o.anthropicToolChoice("tool_choice")
	if items, ok := o.list("tools", false); ok {
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
	o.fail(o.at(name), "value_error", "Value error, "+msg, raw,
		CtxEntry{Key: "error", Value: PyException{Class: "ValueError", Message: msg}})
}

// anthropicMessage validates messages[i]: role (Claude Code's "ctx" and
// "msg" read as "user", as vLLM's before-validator maps them) and content.
func (o *object) anthropicMessage(i int, raw json.RawMessage) (AnthropicMessage, bool) {
	m := o.listItem(o.at("messages", i), raw, "AnthropicMessage")
	if m == nil {
		return AnthropicMessage{}, false
	}
	before := len(o.errs)
	var msg AnthropicMessage
	if rr, ok := m.members["role"]; ok {
		if s, isStr := laxString(rr); isStr {
			if s == "ctx" || s == "msg" {
				s = "user"
				m.members["role"] = json.RawMessage(`"user"`)
			}
			if s == "user" || s == "assistant" || s == "system" {
				msg.Role = s
			}
		}
		m.optionalLiteral("role", "user", "assistant", "system")
	} else {
		m.missing("role")
	}
	if cr, ok := m.members["content"]; ok {
		var list bool
		if msg.Text, list = m.strOrList("content", cr); list {
			msg.Blocks = m.anthropicBlocks(m.at("content"), cr)
		}
	} else {
		m.missing("content")
	}
	o.errs = append(o.errs, m.errs...)
	return msg, len(o.errs) == before
}

// anthropicBlocks validates the list raw (at loc) as list[AnthropicContentBlock],
// the list member of a `str | list[AnthropicContentBlock]` union: when an
// item fails, pydantic reports the str member's error too.
func (o *object) anthropicBlocks(loc []any, raw json.RawMessage) []AnthropicContentBlock {
	var items []json.RawMessage
	_ = json.Unmarshal(raw, &items)
	blocks := make([]AnthropicContentBlock, 0, len(items))
	var errs []FieldError
	for i, item := range items {
		b := &object{raw: item, loc: append(append([]any{}, loc...), i)}
		if jsonKind(item) != '{' {
			errs = append(errs, FieldError{Type: "model_type", Loc: b.loc,
				Msg:   "Input should be a valid dictionary or instance of AnthropicContentBlock",
				Input: item, Ctx: []CtxEntry{{Key: "class_name", Value: "AnthropicContentBlock"}}})
			continue
		}
		_ = json.Unmarshal(item, &b.members)
		var blk AnthropicContentBlock
		if t, ok := b.members["type"]; ok {
			if s := b.optionalLiteral("type", anthropicBlockTypes...); s != nil {
				blk.Type = *s
			} else if isNull(t) {
				b.literalNull("type", t)
			}
		} else {
			b.missing("type")
		}
		blk.Text = b.optionalString("text")
		blk.Source = b.optionalDict("source")
		blk.ID = b.optionalString("id")
		blk.ToolUseID = b.optionalString("tool_use_id")
		blk.Name = b.optionalString("name")
		blk.Input = b.optionalDict("input")
		if cr, ok := b.members["content"]; ok && !isNull(cr) {
			var list bool
			if blk.ContentText, list = b.strOrList("content", cr); list {
				var list []json.RawMessage
				_ = json.Unmarshal(cr, &list)
				var bad []int
				for j, e := range list {
					if jsonKind(e) != '{' {
						bad = append(bad, j)
					}
				}
				if len(bad) > 0 {
					b.fail(b.at("content"), "string_type", "Input should be a valid string", cr)
					for _, j := range bad {
						b.fail(b.at("content", j), "dict_type", "Input should be a valid dictionary", list[j])
					}
				} else {
					blk.ContentList = list
				}
			}
		}
		if raw, ok := b.members["is_error"]; ok && !isNull(raw) {
			b.optionalBool("is_error", false)
		}
		b.optionalString("tool_name")
		blk.Thinking = b.optionalString("thinking")
		b.optionalString("signature")
		b.optionalString("data")
		errs = append(errs, b.errs...)
		blocks = append(blocks, blk)
	}
	if len(errs) > 0 {
		o.fail(loc, "string_type", "Input should be a valid string", raw)
		o.errs = append(o.errs, errs...)
		return nil
	}
	return blocks
}

// literalNull records the literal error pydantic gives a required Literal
// field sent as null (optionalLiteral treats null as absent).
func (o *object) literalNull(name string, raw json.RawMessage) {
	o.members[name] = json.RawMessage(`0`)
	o.optionalLiteral(name, anthropicBlockTypes...)
	o.errs[len(o.errs)-1].Input = raw
}

// listItem is the list item raw at loc as an object of model class, or nil
// after recording pydantic's error for a non-object.
func (o *object) listItem(loc []any, raw json.RawMessage, class string) *object {
	if jsonKind(raw) != '{' {
		o.fail(loc, "model_type", "Input should be a valid dictionary or instance of "+class, raw,
			CtxEntry{Key: "class_name", Value: class})
		return nil
	}
	item := &object{raw: raw, loc: loc}
	_ = json.Unmarshal(raw, &item.members)
	return item
}

// strOrList reads a `str | list[...]` member: the string, or list true for
// a list the caller validates; anything else records both members' errors.
func (o *object) strOrList(name string, raw json.RawMessage) (text *string, list bool) {
	if s, ok := laxString(raw); ok {
		return &s, false
	}
	if jsonKind(raw) == '[' {
		return nil, true
	}
	o.fail(o.at(name), "string_type", "Input should be a valid string", raw)
	o.fail(o.at(name), "list_type", "Input should be a valid list", raw)
	return nil, false
}

// anthropicTool validates tools[i].
func (o *object) anthropicTool(i int, raw json.RawMessage) (AnthropicTool, bool) {
	t := o.listItem(o.at("tools", i), raw, "AnthropicTool")
	if t == nil {
		return AnthropicTool{}, false
	}
	var tool AnthropicTool
	tool.Name = t.requiredString("name")
	tool.Description = t.optionalString("description")
	if s, ok := t.members["input_schema"]; ok {
		if jsonKind(s) != '{' {
			t.fail(t.at("input_schema"), "dict_type", "Input should be a valid dictionary", s)
		} else {
			tool.InputSchema = withDefaultType(s)
		}
	} else {
		t.missing("input_schema")
	}
	if raw, ok := t.members["strict"]; ok && !isNull(raw) {
		t.optionalBool("strict", false)
	}
	if raw, ok := t.members["defer_loading"]; ok && !isNull(raw) {
		tool.DeferLoading = t.optionalBool("defer_loading", false)
	}
	o.errs = append(o.errs, t.errs...)
	return tool, len(t.errs) == 0
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
func (o *object) anthropicToolChoice(name string) *AnthropicToolChoice {
	sub, raw := o.nested(name, false, "AnthropicToolChoice")
	if sub == nil {
		return nil
	}
	tc := &AnthropicToolChoice{}
	if _, ok := sub.members["type"]; ok {
		if s := sub.optionalLiteral("type", "auto", "any", "tool", "none"); s != nil {
			tc.Type = *s
		}
	} else {
		sub.missing("type")
	}
	tc.Name = sub.optionalString("name")
	if len(sub.errs) > 0 {
		o.errs = append(o.errs, sub.errs...)
		return nil
	}
	if tc.Type == "tool" && (tc.Name == nil || *tc.Name == "") {
		const msg = "tool_choice.name is required when type is 'tool'"
		o.fail(o.at(name), "value_error", "Value error, "+msg, raw,
			CtxEntry{Key: "error", Value: PyException{Class: "ValueError", Message: msg}})
		return nil
	}
	return tc
}

// anthropicOutputConfig validates output_config.
func (o *object) anthropicOutputConfig(name string) *AnthropicOutputConfig {
	sub, _ := o.nested(name, false, "AnthropicOutputConfig")
	if sub == nil {
		return nil
	}
	oc := &AnthropicOutputConfig{Effort: sub.optionalLiteral("effort", "low", "medium", "high", "xhigh", "max")}
	if f, _ := sub.nested("format", false, "AnthropicJsonOutputFormat"); f != nil {
		oc.Schema = f.optionalDict("schema")
		oc.FormatType = "json_schema"
		f.optionalLiteral("type", "json_schema")
		sub.errs = append(sub.errs, f.errs...)
	}
	o.errs = append(o.errs, sub.errs...)
	return oc
}
