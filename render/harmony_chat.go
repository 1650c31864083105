package render

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vrender/vrender/internal/telemetry"
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
		tools = harmonyTools(in.Tools)
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

// harmonyMessage is the part of a chat message vLLM's Harmony conversion
// reads (parse_chat_input_to_harmony_message on the message dict).
type harmonyMessage struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Reasoning *string         `json:"reasoning"`
	ToolCalls []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string  `json:"name"`
			Arguments *string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
	ToolCallID string `json:"tool_call_id"`
}

func harmonyMessages(raw []json.RawMessage) ([]harmony.ChatMessage, error) {
	out := make([]harmony.ChatMessage, 0, len(raw))
	for i, r := range raw {
		var m harmonyMessage
		if err := json.Unmarshal(r, &m); err != nil {
			return nil, badParam(fmt.Sprintf("messages.%d", i), "messages.%d: %v", i, err)
		}
		cm := harmony.ChatMessage{Role: m.Role, ToolCallID: m.ToolCallID}
		if m.Reasoning != nil {
			cm.Reasoning = *m.Reasoning
		}
		for _, c := range m.ToolCalls {
			tc := harmony.ToolCall{ID: c.ID, Name: c.Function.Name}
			if c.Function.Arguments != nil {
				tc.Arguments = *c.Function.Arguments
			}
			cm.ToolCalls = append(cm.ToolCalls, tc)
		}
		if err := harmonyContent(m.Content, &cm); err != nil {
			return nil, badParam(fmt.Sprintf("messages.%d.content", i), "messages.%d.content: %v", i, err)
		}
		out = append(out, cm)
	}
	return out, nil
}

// harmonyContent reads content as flatten_input_text_content and the
// TextContent list see it: a string, or parts whose "text" they take.
func harmonyContent(raw json.RawMessage, cm *harmony.ChatMessage) error {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return nil
	}
	if s[0] == '"' {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return err
		}
		cm.Content = &text
		return nil
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return err
	}
	cm.IsList = true
	for i, p := range parts {
		var text *string
		if ps := strings.TrimSpace(string(p)); ps != "" && ps[0] == '"' {
			var t string
			if err := json.Unmarshal(p, &t); err != nil {
				return err
			}
			text = &t
		} else {
			var part struct {
				Text *string `json:"text"`
			}
			if err := json.Unmarshal(p, &part); err != nil {
				return err
			}
			text = part.Text
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
func harmonyTools(tools []protocol.Tool) []harmony.Tool {
	out := make([]harmony.Tool, 0, len(tools))
	for _, t := range tools {
		ht := harmony.Tool{Name: t.Function.Name, Parameters: t.Function.Parameters}
		if t.Function.Description != nil {
			ht.Description = *t.Function.Description
		}
		out = append(out, ht)
	}
	return out
}
