package responses

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

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
	var b wire.ObjectBuilder
	if r.Model != nil {
		b.Str("model", *r.Model)
	}
	b.Raw("messages", msgs)
	for _, m := range r.Passthrough {
		b.Raw(m.Key, m.Value)
	}
	req, err := protocol.DecodeChatCompletionRequest(b.Bytes())
	if err != nil {
		return nil, err
	}
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

// chatMsg is a chat message under construction, its members in insertion
// order as the Python dict vLLM builds keeps them.
type chatMsg struct {
	keys []string
	vals []json.RawMessage
}

func (m *chatMsg) get(k string) (json.RawMessage, bool) {
	for i, key := range m.keys {
		if key == k {
			return m.vals[i], true
		}
	}
	return nil, false
}

// set assigns k, keeping its position when present (dict assignment).
func (m *chatMsg) set(k string, v json.RawMessage) {
	for i, key := range m.keys {
		if key == k {
			m.vals[i] = v
			return
		}
	}
	m.keys = append(m.keys, k)
	m.vals = append(m.vals, v)
}

// isNone reports a member absent or null: dict.get(k) is None.
func (m *chatMsg) isNone(k string) bool {
	v, ok := m.get(k)
	return !ok || string(v) == "null"
}

func (m *chatMsg) bytes() []byte {
	var b wire.ObjectBuilder
	for i, k := range m.keys {
		b.Raw(k, m.vals[i])
	}
	return b.Bytes()
}

func strJSON(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// msgFromObject keeps an input item as the chat message it is given as.
func msgFromObject(raw json.RawMessage) (*chatMsg, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	m := &chatMsg{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		m.set(t.(string), v)
	}
	return m, nil
}

func responsesMessages(r *Request) (json.RawMessage, error) {
	var msgs []*chatMsg
	if r.Instructions != nil && *r.Instructions != "" {
		msgs = append(msgs, &chatMsg{keys: []string{"role", "content"},
			vals: []json.RawMessage{strJSON("system"), strJSON(*r.Instructions)}})
	}
	if r.InputText != nil {
		msgs = append(msgs, &chatMsg{keys: []string{"role", "content"},
			vals: []json.RawMessage{strJSON("user"), strJSON(*r.InputText)}})
	}
	for i, raw := range r.InputItems {
		var prev *chatMsg
		if len(msgs) > 0 {
			prev = msgs[len(msgs)-1]
		}
		m, err := responsesItem(raw, prev)
		if err != nil {
			if bad, ok := err.(*ParamError); ok && bad.Param == "" {
				bad.Param = fmt.Sprintf("input.%d", i)
			}
			return nil, err
		}
		if m != nil {
			msgs = append(msgs, m)
		}
	}
	out := make([][]byte, len(msgs))
	for i, m := range msgs {
		out[i] = m.bytes()
	}
	return json.RawMessage(append(append([]byte{'['}, bytes.Join(out, []byte{','})...), ']')), nil
}

// responsesItem is _construct_message_from_response_item for one input
// item after ResponsesRequest.input_item_parsing: it returns the new
// message, or nil when the item was merged into prev (the last message,
// when it is an assistant message).
func responsesItem(raw json.RawMessage, prev *chatMsg) (*chatMsg, error) {
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
	if prev != nil {
		if role, _ := prev.get("role"); string(role) != `"assistant"` {
			prev = nil
		}
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
		var fn wire.ObjectBuilder
		fn.Str("name", name)
		fn.Str("arguments", *it.Arguments)
		var call wire.ObjectBuilder
		call.Str("id", *it.CallID)
		call.Raw("function", fn.Bytes())
		call.Str("type", "function")
		if prev != nil {
			calls, _ := prev.get("tool_calls")
			switch {
			case prev.isNone("tool_calls"):
				prev.set("tool_calls", append(append([]byte{'['}, call.Bytes()...), ']'))
				return nil, nil
			case len(calls) > 0 && calls[0] == '[':
				prev.set("tool_calls", appendToArray(calls, call.Bytes()))
				return nil, nil
			}
			// An unknown tool_calls shape: vLLM warns and starts a new message.
		}
		return &chatMsg{keys: []string{"role", "tool_calls"},
			vals: []json.RawMessage{strJSON("assistant"), append(append([]byte{'['}, call.Bytes()...), ']')}}, nil
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
		if prev != nil && prev.isNone("reasoning") {
			prev.set("reasoning", strJSON(text))
			return nil, nil
		}
		return &chatMsg{keys: []string{"role", "reasoning"}, vals: []json.RawMessage{strJSON("assistant"), strJSON(text)}}, nil
	case typ == "function_call_output":
		out := it.Output
		if len(out) == 0 {
			out = json.RawMessage("null")
		}
		callID := json.RawMessage("null")
		if it.CallID != nil {
			callID = strJSON(*it.CallID)
		}
		return &chatMsg{keys: []string{"role", "content", "tool_call_id"},
			vals: []json.RawMessage{strJSON("tool"), out, callID}}, nil
	case it.Role != nil && *it.Role == "assistant":
		text, ok := assistantText(it.Content)
		if ok {
			if prev != nil && prev.isNone("content") {
				prev.set("content", strJSON(text))
				return nil, nil
			}
			return &chatMsg{keys: []string{"role", "content"}, vals: []json.RawMessage{strJSON("assistant"), strJSON(text)}}, nil
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

func appendToArray(arr, elem []byte) []byte {
	arr = bytes.TrimSpace(arr)
	out := append([]byte(nil), arr[:len(arr)-1]...)
	if len(bytes.TrimSpace(arr[1:len(arr)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, elem...)
	return append(out, ']')
}

// responsesTools reads the function tools construct_tool_dicts gives the
// template (toolDicts writes them as it does) and the parsers read as chat
// tools: name, parameters, description, and strict kept as given. Other
// tool types (web_search, file_search, code_interpreter, mcp, ...) are not
// given to the template, as vLLM's non-Harmony path iterates only the
// function tools (iter_response_function_tool_dicts); they are accepted,
// not refused.
func responsesTools(tools []*wire.Node) ([]protocol.Tool, error) {
	out := make([]protocol.Tool, 0, len(tools))
	for i, n := range tools {
		if n.Kind != wire.Object {
			return nil, &ParamError{Message: "Each tool must be an object", Param: fmt.Sprintf("tools.%d", i)}
		}
		typ, ok := n.Get("type")
		if !ok {
			return nil, &ParamError{Message: "Field required", Param: fmt.Sprintf("tools.%d.type", i)}
		}
		if typ.Kind != wire.String {
			return nil, &ParamError{Message: "Each tool must be an object", Param: fmt.Sprintf("tools.%d", i)}
		}
		if typ.S != "function" {
			continue
		}
		name, ok := n.Get("name")
		if !ok {
			return nil, &ParamError{Message: "Field required", Param: fmt.Sprintf("tools.%d.name", i)}
		}
		if name.Kind != wire.String {
			return nil, &ParamError{Message: "Each tool must be an object", Param: fmt.Sprintf("tools.%d", i)}
		}
		fn := protocol.FunctionDefinition{Name: name.S}
		if p, _ := n.Get("parameters"); p != nil && p.Kind == wire.Object {
			fn.Parameters = p
		}
		if d, _ := n.Get("description"); d != nil && d.Kind == wire.String {
			fn.Description = &d.S
		}
		if s, ok := n.Get("strict"); ok {
			fn.Extra = []protocol.Member{{Key: "strict", Value: s}}
		}
		out = append(out, protocol.Tool{Type: "function", Function: fn})
	}
	return out, nil
}

// toolDicts are construct_tool_dicts' dicts, what the template gets as
// tools: {"type": "function", "function": FunctionTool.model_dump()}, the
// function's members openai's FunctionTool fields in declaration order,
// defaults filled in. nil (None) without tools.
func toolDicts(tools []protocol.Tool) []*wire.Node {
	if tools == nil {
		return nil
	}
	out := make([]*wire.Node, len(tools))
	for i := range tools {
		f := &tools[i].Function
		fn := &wire.Node{Kind: wire.Object,
			Keys: []string{"name", "parameters", "strict", "type", "description"},
			Vals: []*wire.Node{strNode(f.Name), orNull(f.Parameters), orNull(f.Get("strict")), strNode("function"), wire.NullNode}}
		if f.Description != nil {
			fn.Vals[4] = strNode(*f.Description)
		}
		out[i] = &wire.Node{Kind: wire.Object, Keys: []string{"type", "function"}, Vals: []*wire.Node{strNode("function"), fn}}
	}
	return out
}

func strNode(s string) *wire.Node { return &wire.Node{Kind: wire.String, S: s} }

func orNull(n *wire.Node) *wire.Node {
	if n == nil {
		return wire.NullNode
	}
	return n
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
