package anthropic

import (
	"encoding/json"
	"math/big"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
)

// The Messages decoder before the body's members were kept as its trees:
// members the conversion reads were kept as their JSON text, and every
// list item, block and tool_result item was decoded again from it (here
// with wire.Parse, where it used encoding/json into the member map pylax
// no longer has). The differential tests hold the one-pass decoder to it.

type refRequest struct {
	Model            string
	Messages         []refMessage
	MaxTokens        int
	Metadata         json.RawMessage
	OutputConfig     *refOutputConfig
	StopSequences    []string
	Stream           bool
	SystemText       *string
	SystemBlocks     []refBlock
	Temperature      json.RawMessage
	ToolChoice       *ToolChoice
	Tools            []refTool
	HaveTools        bool
	TopK             json.RawMessage
	TopP             json.RawMessage
	KVTransferParams json.RawMessage
	ECTransferParams json.RawMessage
	ChatTemplateArgs json.RawMessage
	VLLMXargs        json.RawMessage
}

type refMessage struct {
	Role   string
	Text   *string
	Blocks []refBlock
}

type refBlock struct {
	Type        string
	Text        *string
	Source      json.RawMessage
	ID          *string
	ToolUseID   *string
	Name        *string
	Input       json.RawMessage
	ContentText *string
	ContentList []json.RawMessage
	Thinking    *string
}

type refTool struct {
	Name         string
	Description  *string
	InputSchema  json.RawMessage
	DeferLoading *bool
}

type refOutputConfig struct {
	Effort     *string
	FormatType string
	Schema     json.RawMessage
}

// refObjectOf decodes the JSON object raw again, as the old decoder did
// for every nested object.
func refObjectOf(raw json.RawMessage, loc []any) *object {
	n, err := wire.Parse(raw)
	if err != nil || n.Kind != wire.Object {
		panic("refObjectOf: not an object: " + string(raw))
	}
	return &object{pylax.ObjectAt(n, loc)}
}

// refMember is the text of member name, nil when absent.
func (o *object) refMember(name string) (json.RawMessage, bool) {
	n, ok := o.Nodes[name]
	if !ok {
		return nil, false
	}
	return n.Raw, true
}

func refDecodeMessagesRequest(data []byte) (*refRequest, error) {
	obj, fe := decodeBody(data, "AnthropicMessagesRequest")
	if fe != nil {
		return nil, &pylax.ValidationError{Errors: []pylax.FieldError{*fe}}
	}
	r := &refRequest{}
	obj.refModelMessages(r)
	if raw, ok := obj.refMember("max_tokens"); ok {
		if n, ok := obj.CheckedInt(obj.At("max_tokens"), raw, nil, nil); ok {
			if n.Cmp(big.NewInt(0)) <= 0 {
				obj.fieldValueError("max_tokens", "max_tokens must be positive", &wire.Node{Raw: raw})
			}
			r.MaxTokens = pylax.ClampInt(n)
		}
	} else {
		obj.Missing("max_tokens")
	}
	r.Metadata = obj.OptionalDict("metadata")
	r.OutputConfig = obj.refOutputConfig("output_config")
	if raw, ok := obj.refMember("stop_sequences"); ok && !pylax.IsNull(raw) {
		r.StopSequences = obj.StringList("stop_sequences", nil)
	}
	if s := obj.OptionalBool("stream", false); s != nil {
		r.Stream = *s
	}
	obj.refSystem(r)
	if obj.OptionalFloat("temperature", nil) != nil {
		r.Temperature, _ = obj.refMember("temperature")
	}
	obj.refTools(r)
	if obj.OptionalInt("top_k", nil, nil, nil) != nil {
		r.TopK, _ = obj.refMember("top_k")
	}
	if obj.OptionalFloat("top_p", nil) != nil {
		r.TopP, _ = obj.refMember("top_p")
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

func refDecodeCountTokensRequest(data []byte) (*refRequest, error) {
	obj, fe := decodeBody(data, "AnthropicCountTokensRequest")
	if fe != nil {
		return nil, &pylax.ValidationError{Errors: []pylax.FieldError{*fe}}
	}
	r := &refRequest{}
	obj.refModelMessages(r)
	obj.refSystem(r)
	obj.refTools(r)
	r.ChatTemplateArgs = obj.OptionalDict("chat_template_kwargs")
	if len(obj.Errs) > 0 {
		return nil, &pylax.ValidationError{Errors: obj.Errs}
	}
	return r, nil
}

func (o *object) refModelMessages(r *refRequest) {
	if raw, ok := o.refMember("model"); ok {
		r.Model = o.RequiredString("model")
		if len(o.Errs) == 0 && r.Model == "" {
			o.fieldValueError("model", "Model is required", &wire.Node{Raw: raw})
		}
	} else {
		o.Missing("model")
	}
	if items, ok := o.List("messages", true); ok {
		for i, item := range items {
			if m, ok := o.refMessage(i, item); ok {
				r.Messages = append(r.Messages, m)
			}
		}
	}
}

func (o *object) refSystem(r *refRequest) {
	if raw, ok := o.refMember("system"); ok && !pylax.IsNull(raw) {
		var list bool
		if r.SystemText, list = o.refStrOrList("system", raw); list {
			r.SystemBlocks = o.refBlocks(o.At("system"), raw)
		}
	}
}

func (o *object) refTools(r *refRequest) {
	r.ToolChoice = o.refToolChoice("tool_choice")
	if items, ok := o.List("tools", false); ok {
		r.HaveTools = true
		for i, item := range items {
			if t, ok := o.refTool(i, item); ok {
				r.Tools = append(r.Tools, t)
			}
		}
	}
}

func (o *object) refMessage(i int, raw json.RawMessage) (refMessage, bool) {
	m := o.refListItem(o.At("messages", i), raw, "AnthropicMessage")
	if m == nil {
		return refMessage{}, false
	}
	before := len(o.Errs)
	var msg refMessage
	if rr, ok := m.refMember("role"); ok {
		// The old decoder rewrote "ctx" and "msg" to "user" in the member
		// map, then validated the rewritten "user", which cannot fail. A
		// null role, block type, tool_choice type or format type is refused
		// here as in the one-pass decoder: the old decoder read them as
		// absent (a panic on a null tool_choice type).
		switch s, isStr := pylax.LaxString(rr); {
		case isStr && (s == "ctx" || s == "msg"):
			msg.Role = "user"
		case isStr && (s == "user" || s == "assistant" || s == "system"):
			msg.Role = s
			m.OptionalLiteral("role", "user", "assistant", "system")
		default:
			m.literal("role", "user", "assistant", "system")
		}
	} else {
		m.Missing("role")
	}
	if cr, ok := m.refMember("content"); ok {
		var list bool
		if msg.Text, list = m.refStrOrList("content", cr); list {
			msg.Blocks = m.refBlocks(m.At("content"), cr)
		}
	} else {
		m.Missing("content")
	}
	o.Errs = append(o.Errs, m.Errs...)
	return msg, len(o.Errs) == before
}

func (o *object) refBlocks(loc []any, raw json.RawMessage) []refBlock {
	var items []json.RawMessage
	_ = json.Unmarshal(raw, &items)
	blocks := make([]refBlock, 0, len(items))
	var errs []pylax.FieldError
	for i, item := range items {
		bloc := append(append([]any{}, loc...), i)
		if pylax.Kind(item) != '{' {
			errs = append(errs, pylax.FieldError{Type: "model_type", Loc: bloc,
				Msg:   "Input should be a valid dictionary or instance of AnthropicContentBlock",
				Input: item, Ctx: []pylax.CtxEntry{{Key: "class_name", Value: "AnthropicContentBlock"}}})
			continue
		}
		b := refObjectOf(item, bloc)
		var blk refBlock
		if t, ok := b.refMember("type"); ok {
			if s := b.OptionalLiteral("type", anthropicBlockTypes...); s != nil {
				blk.Type = *s
			} else if pylax.IsNull(t) {
				b.literalNull("type", b.Nodes["type"], anthropicBlockTypes...)
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
		if cr, ok := b.refMember("content"); ok && !pylax.IsNull(cr) {
			var list bool
			if blk.ContentText, list = b.refStrOrList("content", cr); list {
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
		if raw, ok := b.refMember("is_error"); ok && !pylax.IsNull(raw) {
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

func (o *object) refListItem(loc []any, raw json.RawMessage, class string) *object {
	if pylax.Kind(raw) != '{' {
		o.Fail(loc, "model_type", "Input should be a valid dictionary or instance of "+class, raw,
			pylax.CtxEntry{Key: "class_name", Value: class})
		return nil
	}
	return refObjectOf(raw, loc)
}

func (o *object) refStrOrList(name string, raw json.RawMessage) (text *string, list bool) {
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

func (o *object) refTool(i int, raw json.RawMessage) (refTool, bool) {
	t := o.refListItem(o.At("tools", i), raw, "AnthropicTool")
	if t == nil {
		return refTool{}, false
	}
	var tool refTool
	tool.Name = t.RequiredString("name")
	tool.Description = t.OptionalString("description")
	if s, ok := t.refMember("input_schema"); ok {
		if pylax.Kind(s) != '{' {
			t.Fail(t.At("input_schema"), "dict_type", "Input should be a valid dictionary", s)
		} else {
			tool.InputSchema = refWithDefaultType(s)
		}
	} else {
		t.Missing("input_schema")
	}
	if raw, ok := t.refMember("strict"); ok && !pylax.IsNull(raw) {
		t.OptionalBool("strict", false)
	}
	if raw, ok := t.refMember("defer_loading"); ok && !pylax.IsNull(raw) {
		tool.DeferLoading = t.OptionalBool("defer_loading", false)
	}
	o.Errs = append(o.Errs, t.Errs...)
	return tool, len(t.Errs) == 0
}

func refWithDefaultType(schema json.RawMessage) json.RawMessage {
	var members map[string]json.RawMessage
	if json.Unmarshal(schema, &members) != nil {
		return schema
	}
	if _, ok := members["type"]; ok {
		return schema
	}
	trimmed := refTrimSpace(schema)
	body := trimmed[:len(trimmed)-1] // drop the closing brace
	out := make([]byte, 0, len(schema)+18)
	out = append(out, body...)
	if len(members) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"type":"object"}`...)
	return out
}

func refTrimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

func (o *object) refToolChoice(name string) *ToolChoice {
	sub, raw := o.Nested(name, false, "AnthropicToolChoice")
	if sub == nil {
		return nil
	}
	tc := &ToolChoice{}
	if tn, ok := o.Nodes[name].Get("type"); ok {
		if tn.IsNull() {
			(&object{sub}).literalNull("type", tn, "auto", "any", "tool", "none")
		} else if s := sub.OptionalLiteral("type", "auto", "any", "tool", "none"); s != nil {
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

func (o *object) refOutputConfig(name string) *refOutputConfig {
	sub, _ := o.Nested(name, false, "AnthropicOutputConfig")
	if sub == nil {
		return nil
	}
	oc := &refOutputConfig{Effort: sub.OptionalLiteral("effort", "low", "medium", "high", "xhigh", "max")}
	if f, _ := sub.Nested("format", false, "AnthropicJsonOutputFormat"); f != nil {
		oc.Schema = f.OptionalDict("schema")
		oc.FormatType = "json_schema"
		format, _ := o.Nodes[name].Get("format")
		if ft, ok := format.Get("type"); ok && ft.IsNull() {
			(&object{f}).literalNull("type", ft, "json_schema")
		} else {
			f.OptionalLiteral("type", "json_schema")
		}
		sub.Errs = append(sub.Errs, f.Errs...)
	}
	o.Errs = append(o.Errs, sub.Errs...)
	return oc
}
