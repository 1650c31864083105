package responses

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/render"
)

// The conversion before messages were typed: it wrote each chat message as
// JSON, which the chat request's decoder then read. The differential test
// holds the typed conversion to it.

// refChatMsg is a chat message under construction, its members in insertion
// order as the Python dict vLLM builds keeps them.
type refChatMsg struct {
	keys []string
	vals []json.RawMessage
}

func (m *refChatMsg) get(k string) (json.RawMessage, bool) {
	for i, key := range m.keys {
		if key == k {
			return m.vals[i], true
		}
	}
	return nil, false
}

// set assigns k, keeping its position when present (dict assignment).
func (m *refChatMsg) set(k string, v json.RawMessage) {
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
func (m *refChatMsg) isNone(k string) bool {
	v, ok := m.get(k)
	return !ok || string(v) == "null"
}

func (m *refChatMsg) bytes() []byte {
	var b wire.ObjectBuilder
	for i, k := range m.keys {
		b.Raw(k, m.vals[i])
	}
	return b.Bytes()
}

func refStrJSON(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// msgFromObject keeps an input item as the chat message it is given as.
func refMsgFromObject(raw json.RawMessage) (*refChatMsg, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	m := &refChatMsg{}
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

func refResponsesMessages(r *Request) (json.RawMessage, error) {
	var msgs []*refChatMsg
	if r.Instructions != nil && *r.Instructions != "" {
		msgs = append(msgs, &refChatMsg{keys: []string{"role", "content"},
			vals: []json.RawMessage{refStrJSON("system"), refStrJSON(*r.Instructions)}})
	}
	if r.InputText != nil {
		msgs = append(msgs, &refChatMsg{keys: []string{"role", "content"},
			vals: []json.RawMessage{refStrJSON("user"), refStrJSON(*r.InputText)}})
	}
	for i := range r.InputItems {
		raw := r.InputItems[i].Message.Raw
		var prev *refChatMsg
		if len(msgs) > 0 {
			prev = msgs[len(msgs)-1]
		}
		m, err := refResponsesItem(raw, prev)
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
func refResponsesItem(raw json.RawMessage, prev *refChatMsg) (*refChatMsg, error) {
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
				prev.set("tool_calls", refAppendToArray(calls, call.Bytes()))
				return nil, nil
			}
			// An unknown tool_calls shape: vLLM warns and starts a new message.
		}
		return &refChatMsg{keys: []string{"role", "tool_calls"},
			vals: []json.RawMessage{refStrJSON("assistant"), append(append([]byte{'['}, call.Bytes()...), ']')}}, nil
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
			text = refPartText(content[0])
		case len(summary) >= 1:
			text = refPartText(summary[0])
		}
		if prev != nil && prev.isNone("reasoning") {
			prev.set("reasoning", refStrJSON(text))
			return nil, nil
		}
		return &refChatMsg{keys: []string{"role", "reasoning"}, vals: []json.RawMessage{refStrJSON("assistant"), refStrJSON(text)}}, nil
	case typ == "function_call_output":
		out := it.Output
		if len(out) == 0 {
			out = json.RawMessage("null")
		}
		callID := json.RawMessage("null")
		if it.CallID != nil {
			callID = refStrJSON(*it.CallID)
		}
		return &refChatMsg{keys: []string{"role", "content", "tool_call_id"},
			vals: []json.RawMessage{refStrJSON("tool"), out, callID}}, nil
	case it.Role != nil && *it.Role == "assistant":
		text, ok := refAssistantText(it.Content)
		if ok {
			if prev != nil && prev.isNone("content") {
				prev.set("content", refStrJSON(text))
				return nil, nil
			}
			return &refChatMsg{keys: []string{"role", "content"}, vals: []json.RawMessage{refStrJSON("assistant"), refStrJSON(text)}}, nil
		}
	}
	// Other messages reach the chat parser as given.
	m, err := refMsgFromObject(raw)
	if err != nil {
		return nil, &ParamError{Message: "Each input item must be an object"}
	}
	return m, nil
}

func refAppendToArray(arr, elem []byte) []byte {
	arr = bytes.TrimSpace(arr)
	out := append([]byte(nil), arr[:len(arr)-1]...)
	if len(bytes.TrimSpace(arr[1:len(arr)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, elem...)
	return append(out, ']')
}

// refAssistantText is the text vLLM takes from an assistant message: a
// string content, or the first content part's text.
func refAssistantText(content json.RawMessage) (string, bool) {
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

func refPartText(raw json.RawMessage) string {
	var p struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &p)
	return p.Text
}

// refShouldContinueFinalMessage is should_continue_final_message as it
// read the last raw item.
func refShouldContinueFinalMessage(items []json.RawMessage) bool {
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
