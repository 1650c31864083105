package responses

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
)

// ToChat converts a Responses request the way vLLM's non-Harmony
// Responses path does (vllm/entrypoints/openai/responses/utils.py
// construct_input_messages and construct_tool_dicts, protocol.py
// build_chat_params): instructions become a leading system message, a
// string input one user message, and input items chat messages, merged
// into the preceding assistant message where vLLM merges them; function
// tools are wrapped as {"type":"function","function":<FunctionTool dump>}.
// The sampling members ResponsesRequest shares with chat go through the
// chat request's validation.
func ToChat(r *Request) (*protocol.ChatCompletionRequest, error) {
	msgs, err := responsesMessages(r)
	if err != nil {
		return nil, err
	}
	// The messages are built typed; pydantic's check of them (a list of
	// dicts) holds for every message built, so they join the request
	// after validation.
	var b wire.ObjectBuilder
	if r.Model != nil {
		b.Str("model", *r.Model)
	}
	b.Raw("messages", json.RawMessage("[]"))
	for _, m := range r.Passthrough {
		b.Raw(m.Key, m.Value)
	}
	req, err := protocol.DecodeChatCompletionRequest(b.Bytes())
	if err != nil {
		return nil, err
	}
	req.Messages = msgs
	continueFinal := shouldContinueFinalMessage(r.InputItems)
	req.AddGenerationPrompt = !continueFinal
	req.ContinueFinalMessage = continueFinal
	req.ReasoningEffort = nil
	if r.Reasoning != nil {
		req.ReasoningEffort = r.Reasoning.Effort
	}
	req.ToolChoice = r.ToolChoice
	req.Tools = nil
	if len(r.Tools) > 0 && r.ToolChoice.Kind != protocol.ToolChoiceNone {
		if req.Tools, err = responsesTools(r.Tools); err != nil {
			return nil, err
		}
	}
	return req, nil
}

// shouldContinueFinalMessage is should_continue_final_message: the last
// item is a message or reasoning item still in progress or incomplete.
func shouldContinueFinalMessage(items []json.RawMessage) bool {
	if len(items) == 0 {
		return false
	}
	var last struct {
		Type   *string `json:"type"`
		Status *string `json:"status"`
	}
	if json.Unmarshal(items[len(items)-1], &last) != nil {
		return false
	}
	if last.Type != nil && *last.Type != "message" && *last.Type != "reasoning" {
		return false
	}
	return last.Status != nil && (*last.Status == "in_progress" || *last.Status == "incomplete")
}

// msgFromObject reads an input item as the chat message it is given as.
func msgFromObject(raw json.RawMessage) (*protocol.Message, error) {
	n, err := wire.Parse(raw)
	if err != nil || n.Kind != wire.Object {
		return nil, errors.New("not an object")
	}
	m := protocol.MessageOf(n)
	return &m, nil
}

func responsesMessages(r *Request) ([]protocol.Message, error) {
	var msgs []protocol.Message
	if r.Instructions != nil && *r.Instructions != "" {
		msgs = append(msgs, protocol.TextMessage("system", *r.Instructions))
	}
	if r.InputText != nil {
		msgs = append(msgs, protocol.TextMessage("user", *r.InputText))
	}
	for i, raw := range r.InputItems {
		var prev *protocol.Message
		if len(msgs) > 0 {
			prev = &msgs[len(msgs)-1]
		}
		m, err := responsesItem(raw, prev)
		if err != nil {
			if bad, ok := err.(*ParamError); ok && bad.Param == "" {
				bad.Param = fmt.Sprintf("input.%d", i)
			}
			return nil, err
		}
		if m != nil {
			msgs = append(msgs, *m)
		}
	}
	return msgs, nil
}

// objectNode is a JSON object of the given members in order, built by code.
func objectNode(keys []string, vals ...*wire.Node) *wire.Node {
	return &wire.Node{Kind: wire.Object, Keys: keys, Vals: vals}
}

// responsesItem is _construct_message_from_response_item for one input
// item after ResponsesRequest.input_item_parsing: it returns the new
// message, or nil when the item was merged into prev (the last message,
// when it is an assistant message).
func responsesItem(raw json.RawMessage, prev *protocol.Message) (*protocol.Message, error) {
	var it struct {
		Type             *string         `json:"type"`
		Role             *string         `json:"role"`
		CallID           *string         `json:"call_id"`
		Name             *string         `json:"name"`
		Namespace        *string         `json:"namespace"`
		Arguments        *string         `json:"arguments"`
		Output           json.RawMessage `json:"output"`
		EncryptedContent *string         `json:"encrypted_content"`
		Summary          json.RawMessage `json:"summary"`
		Content          json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &it); err != nil {
		return nil, &ParamError{Message: "Each input item must be an object"}
	}
	if prev != nil && !(prev.HasRole && prev.Role == "assistant") {
		prev = nil
	}
	typ := ""
	if it.Type != nil {
		typ = *it.Type
	}
	switch {
	case typ == "function_call":
		if it.CallID == nil || it.Name == nil || it.Arguments == nil {
			return nil, &ParamError{Message: "function_call items need call_id, name and arguments strings"}
		}
		name := *it.Name
		if it.Namespace != nil && *it.Namespace != "" {
			// vLLM bf578e1 flattens a namespaced call as its tools are
			// flattened (flat_namespace_tool_name).
			name = *it.Namespace + "__" + name
		}
		fn := objectNode([]string{"name", "arguments"}, wire.StringNode(name), wire.StringNode(*it.Arguments))
		call := objectNode([]string{"id", "function", "type"}, wire.StringNode(*it.CallID), fn, wire.StringNode("function"))
		if prev != nil {
			switch calls := prev.ToolCalls; {
			case calls.IsNull():
				prev.ToolCalls = &wire.Node{Kind: wire.Array, Arr: []*wire.Node{call}}
				return nil, nil
			case calls.Kind == wire.Array:
				// A new list: the old one may be the request's own.
				prev.ToolCalls = &wire.Node{Kind: wire.Array, Arr: append(slices.Clip(calls.Arr), call)}
				return nil, nil
			}
			// An unknown tool_calls shape: vLLM warns and starts a new message.
		}
		return &protocol.Message{Role: "assistant", HasRole: true,
			ToolCalls: &wire.Node{Kind: wire.Array, Arr: []*wire.Node{call}}}, nil
	case typ == "reasoning":
		// pydantic lets a summary that is not a list through (the
		// TypedDict's Iterable); vLLM then passes the item to its chat
		// parser as a message without a role.
		var summary []json.RawMessage
		if json.Unmarshal(it.Summary, &summary) != nil || summary == nil {
			return nil, &ParamError{Message: "reasoning items need a summary list"}
		}
		if it.EncryptedContent != nil && *it.EncryptedContent != "" {
			return nil, &render.BadRequestError{Message: "Encrypted content is not supported."}
		}
		var content []json.RawMessage
		_ = json.Unmarshal(it.Content, &content)
		text := ""
		switch {
		case len(content) >= 1:
			text = partText(content[0])
		case len(summary) >= 1:
			text = partText(summary[0])
		}
		if prev != nil && prev.Reasoning.IsNull() {
			prev.Reasoning = wire.StringNode(text)
			return nil, nil
		}
		return &protocol.Message{Role: "assistant", HasRole: true, Reasoning: wire.StringNode(text)}, nil
	case typ == "function_call_output":
		out := wire.NullNode
		if len(it.Output) > 0 {
			n, err := wire.Parse(it.Output)
			if err != nil {
				return nil, &ParamError{Message: "Each input item must be an object"}
			}
			out = n
		}
		callID := wire.NullNode
		if it.CallID != nil {
			callID = wire.StringNode(*it.CallID)
		}
		return &protocol.Message{Role: "tool", HasRole: true, Content: protocol.ContentOf(out), ToolCallID: callID,
			Depth: out.Depth + 1}, nil
	case it.Role != nil && *it.Role == "assistant":
		text, ok := assistantText(it.Content)
		if ok {
			if prev != nil && prev.Content.Kind == protocol.ContentNone {
				prev.Content = protocol.Content{Kind: protocol.ContentText, Text: text}
				return nil, nil
			}
			m := protocol.TextMessage("assistant", text)
			return &m, nil
		}
	}
	// Other messages reach the chat parser as given.
	m, err := msgFromObject(raw)
	if err != nil {
		return nil, &ParamError{Message: "Each input item must be an object"}
	}
	return m, nil
}

// assistantText is the text vLLM takes from an assistant message: a string
// content, or the first content part's text.
func assistantText(content json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s, true
	}
	var parts []json.RawMessage
	if json.Unmarshal(content, &parts) != nil || len(parts) == 0 {
		return "", false
	}
	var p struct {
		Text *string `json:"text"`
	}
	if json.Unmarshal(parts[0], &p) != nil || p.Text == nil {
		return "", false
	}
	return *p.Text, true
}

func partText(raw json.RawMessage) string {
	var p struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &p)
	return p.Text
}

// functionTool is the members of openai's FunctionTool a tool is read by.
type functionTool struct {
	Type        *string         `json:"type"`
	Name        *string         `json:"name"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      json.RawMessage `json:"strict"`
	Description json.RawMessage `json:"description"`
}

// responsesTools is construct_tool_dicts: each function tool becomes
// openai's FunctionTool.model_dump() (name, parameters, strict, type,
// description, defaults filled) wrapped as a chat tool. Other tool types
// (web_search, file_search, code_interpreter, mcp, ...) are not given to
// the template, as vLLM's non-Harmony path iterates only the function
// tools (iter_response_function_tool_dicts); they are accepted, not refused.
func responsesTools(tools []json.RawMessage) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, 0, len(tools))
	for i, raw := range tools {
		var t functionTool
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, &ParamError{Message: "Each tool must be an object", Param: fmt.Sprintf("tools.%d", i)}
		}
		if t.Type == nil {
			return nil, &ParamError{Message: "Field required", Param: fmt.Sprintf("tools.%d.type", i)}
		}
		if *t.Type != "function" {
			continue
		}
		if t.Name == nil {
			return nil, &ParamError{Message: "Field required", Param: fmt.Sprintf("tools.%d.name", i)}
		}
		var fn wire.ObjectBuilder
		fn.Str("name", *t.Name)
		fn.Raw("parameters", jsonOrNull(t.Parameters))
		fn.Raw("strict", jsonOrNull(t.Strict))
		fn.Str("type", "function")
		fn.Raw("description", jsonOrNull(t.Description))
		var w wire.ObjectBuilder
		w.Str("type", "function")
		w.Raw("function", fn.Bytes())
		out = append(out, w.Bytes())
	}
	return out, nil
}

// Render is the render server's render_responses_request after
// the model check (vllm PR #50195): previous_response_id is refused, the
// request is rendered through the chat pipeline, and the sampling params
// are ResponsesRequest.to_sampling_params.
func Render(ctx context.Context, g *render.Generator, r *Request) (*protocol.GenerateRequest, error) {
	if r.PreviousResponseID != nil {
		return nil, &ParamError{
			Message: "previous_response_id is not supported by the stateless render endpoint.",
			Param:   "previous_response_id", Type: "invalid_request_error"}
	}
	req, err := ToChat(r)
	if err != nil {
		return nil, err
	}
	res, err := renderChat(ctx, g, r, req)
	if err != nil {
		return nil, err
	}
	return &res.Request, nil
}

func jsonOrNull(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage("null")
	}
	return v
}
