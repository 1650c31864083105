package render

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vrender/vrender/internal/telemetry"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render/harmony"
)

// HarmonyConfig turns on vLLM's gpt-oss path: chat requests are built as
// Harmony messages and rendered to token ids by openai_harmony's rules
// instead of a chat template (OnlineRenderer.use_harmony, set when
// config.json's model_type is gpt_oss).
type HarmonyConfig struct {
	// StartDate is VLLM_SYSTEM_START_DATE ("" means today, from Config.Now).
	StartDate string
	// SystemInstructions is VLLM_GPT_OSS_HARMONY_SYSTEM_INSTRUCTIONS.
	SystemInstructions bool
}

// Harmony reports whether chat requests take vLLM's Harmony path.
func (r *Renderer) Harmony() bool { return r.cfg.Harmony != nil }

// RenderHarmony is _make_request_with_harmony: the preamble, the converted
// conversation and the prompt ids of render_for_completion. openai_harmony
// encodes every text piece with encode_ordinary, so a message spelling
// "<|end|>" stays ordinary text; only the formatting tokens it places are
// special. There is no chat template, truncation or length check here.
func (r *Renderer) RenderHarmony(ctx context.Context, in ChatInput) (*ChatPrompt, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	msgs, err := harmonyMessages(in.Messages)
	if err != nil {
		return nil, err
	}
	var tools []harmony.Tool
	if in.Tools != nil && !(r.cfg.ExcludeToolsWhenToolChoiceNone &&
		in.ToolChoice.Kind == protocol.ToolChoiceNone) {
		if tools, err = harmonyTools(in.Tools); err != nil {
			return nil, err
		}
	}
	opts := harmony.Options{StartDate: r.cfg.Harmony.StartDate, SystemInstructions: r.cfg.Harmony.SystemInstructions}
	if opts.StartDate == "" {
		opts.StartDate = r.cfg.Now().Format("2006-01-02")
	}
	if in.ReasoningEffort != nil {
		opts.ReasoningEffort = *in.ReasoningEffort
	}
	st := r.stages.Load()
	start := st.Start()
	built, err := harmony.Build(msgs, tools, opts)
	if err != nil {
		return nil, &BadRequestError{Message: err.Error(), Err: err}
	}
	pieces, err := harmony.RenderPieces(built)
	st.Since(telemetry.StageTemplate, start)
	if err != nil {
		return nil, &BadRequestError{Message: err.Error(), Err: err}
	}
	var text strings.Builder
	for _, p := range pieces {
		text.WriteString(p.Text)
	}
	// The byte limit is checked before any piece is tokenized.
	if in.CheckText != nil {
		if err := in.CheckText(text.String()); err != nil {
			return nil, err
		}
	}
	var ids []int
	for _, p := range pieces {
		if !p.Special {
			ids = append(ids, r.tok.EncodeOrdinary(p.Text)...)
			continue
		}
		id, ok := r.tok.TokenToID(p.Text)
		if !ok {
			return nil, fmt.Errorf("render: the tokenizer has no Harmony token %s (not an o200k_harmony tokenizer)", p.Text)
		}
		ids = append(ids, id)
	}
	return &ChatPrompt{Text: text.String(), TokenIDs: ids, ContentFormat: FormatOpenAI}, nil
}

// harmonyMessages reads the members vLLM's Harmony conversion reads
// (parse_chat_input_to_harmony_message on the message dict): role,
// content, reasoning, tool_calls (id, function name and arguments) and
// tool_call_id, each a string or null. A member of another type is
// refused with the message Go's encoding/json gave when this path decoded
// messages with it (the error texts clients have seen).
func harmonyMessages(in []protocol.Message) ([]harmony.ChatMessage, error) {
	out := make([]harmony.ChatMessage, 0, len(in))
	for i := range in {
		m := &in[i]
		cm, err := harmonyMessageOf(m)
		if err != nil {
			return nil, badParam(fmt.Sprintf("messages.%d", i), "messages.%d: %v", i, err)
		}
		if err := harmonyContent(&m.Content, &cm); err != nil {
			return nil, badParam(fmt.Sprintf("messages.%d.content", i), "messages.%d.content: %v", i, err)
		}
		out = append(out, cm)
	}
	return out, nil
}

// Go's names of the types the Harmony path once decoded tool calls into,
// as its encoding/json errors spell them.
const (
	goToolCallsType = `[]struct { ID string "json:\"id\""; Function struct { Name string "json:\"name\""; Arguments *string "json:\"arguments\"" } "json:\"function\"" }`
	goToolCallType  = `struct { ID string "json:\"id\""; Function struct { Name string "json:\"name\""; Arguments *string "json:\"arguments\"" } "json:\"function\"" }`
	goFunctionType  = `struct { Name string "json:\"name\""; Arguments *string "json:\"arguments\"" }`
	goPartType      = `struct { Text *string "json:\"text\"" }`
)

// goTypeError is encoding/json's UnmarshalTypeError text for n decoded
// into a field (path) or a value (path "") of type typ.
func goTypeError(n *node, path, typ string) error {
	kind := map[wire.Kind]string{jBool: "bool", jNum: "number", jStr: "string", jArr: "array", jObj: "object"}[n.Kind]
	if path == "" {
		return fmt.Errorf("json: cannot unmarshal %s into Go value of type %s", kind, typ)
	}
	return fmt.Errorf("json: cannot unmarshal %s into Go struct field %s of type %s", kind, path, typ)
}

// harmonyString is a member read as a Go string: null or absent is "".
func harmonyString(n *node, path string) (string, error) {
	if n.IsNull() {
		return "", nil
	}
	if s, ok := n.Text(); ok {
		return s, nil
	}
	return "", goTypeError(n, path, "string")
}

func harmonyMessageOf(m *protocol.Message) (harmony.ChatMessage, error) {
	var cm harmony.ChatMessage
	var err error
	if m.HasRole {
		cm.Role = m.Role
	} else if _, err = harmonyString(m.BadRole, "harmonyMessage.role"); err != nil {
		return cm, err
	}
	if cm.Reasoning, err = harmonyString(m.Reasoning, "harmonyMessage.reasoning"); err != nil {
		return cm, err
	}
	if tc := m.ToolCalls; !tc.IsNull() {
		if tc.Kind != jArr {
			return cm, goTypeError(tc, "harmonyMessage.tool_calls", goToolCallsType)
		}
		for _, c := range tc.Arr {
			call, err := harmonyToolCall(c)
			if err != nil {
				return cm, err
			}
			cm.ToolCalls = append(cm.ToolCalls, call)
		}
	}
	cm.ToolCallID, err = harmonyString(m.ToolCallID, "harmonyMessage.tool_call_id")
	return cm, err
}

func harmonyToolCall(c *node) (harmony.ToolCall, error) {
	var tc harmony.ToolCall
	if c.IsNull() {
		return tc, nil
	}
	if c.Kind != jObj {
		return tc, goTypeError(c, "harmonyMessage.tool_calls", goToolCallType)
	}
	id, _ := c.Get("id")
	var err error
	if tc.ID, err = harmonyString(id, ".tool_calls.id"); err != nil {
		return tc, err
	}
	fn, _ := c.Get("function")
	if fn.IsNull() {
		return tc, nil
	}
	if fn.Kind != jObj {
		return tc, goTypeError(fn, ".tool_calls.function", goFunctionType)
	}
	name, _ := fn.Get("name")
	if tc.Name, err = harmonyString(name, ".tool_calls.function.name"); err != nil {
		return tc, err
	}
	args, _ := fn.Get("arguments")
	tc.Arguments, err = harmonyString(args, ".tool_calls.function.arguments")
	return tc, err
}

// harmonyContent reads content as flatten_input_text_content and the
// TextContent list see it: a string, or parts whose "text" they take.
func harmonyContent(c *protocol.Content, cm *harmony.ChatMessage) error {
	switch c.Kind {
	case protocol.ContentNone:
		return nil
	case protocol.ContentText:
		text := c.Text
		cm.Content = &text
		return nil
	case protocol.ContentInvalid:
		return goTypeError(c.Bad, "", "[]json.RawMessage")
	}
	cm.IsList = true
	for i := range c.Parts {
		p := &c.Parts[i]
		var text *string
		switch p.Kind {
		case protocol.PartString:
			t := p.Text
			text = &t
		case protocol.PartNotObject:
			if !p.Bad.IsNull() {
				return goTypeError(p.Bad, "", goPartType)
			}
		default:
			if t := p.TextMember; !t.IsNull() {
				s, ok := t.Text()
				if !ok {
					return goTypeError(t, ".text", "string")
				}
				text = &s
			}
		}
		if i == 0 && text != nil {
			cm.First = *text
		}
		if text != nil {
			cm.Parts = append(cm.Parts, *text)
		}
	}
	return nil
}

// harmonyTools is create_tool_definition for each function tool.
func harmonyTools(raw []json.RawMessage) ([]harmony.Tool, error) {
	var out []harmony.Tool
	for i, r := range raw {
		var t struct {
			Type     string `json:"type"`
			Function struct {
				Name        string          `json:"name"`
				Description *string         `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		if err := json.Unmarshal(r, &t); err != nil {
			return nil, badParam(fmt.Sprintf("tools.%d", i), "Each tool must be an object")
		}
		if t.Type != "" && t.Type != "function" {
			return nil, badRequest("tool type %s not supported", t.Type)
		}
		ht := harmony.Tool{Name: t.Function.Name}
		if t.Function.Description != nil {
			ht.Description = *t.Function.Description
		}
		if p := strings.TrimSpace(string(t.Function.Parameters)); p != "" && p != "null" {
			ht.Parameters = t.Function.Parameters
		}
		out = append(out, ht)
	}
	return out, nil
}
