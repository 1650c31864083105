package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vrender/vrender/internal/pyfmt"
	"github.com/vrender/vrender/protocol"
)

// billingHeader starts the system block Claude Code adds with a per-request
// hash; vLLM drops it so that prefix caching keeps working.
const billingHeader = "x-anthropic-billing-header"

// AnthropicToChat converts a Messages request into the chat completion
// request vLLM's AnthropicServingMessages builds from it
// (_convert_anthropic_to_openai_request, renamed to_chat_completion_request
// by vllm PR #45803), so /v1/messages/render renders through the one chat
// pipeline. The base request goes through chat validation, as vLLM's
// constructor call does; stream, response_format, reasoning_effort,
// tool_choice and tools are assigned afterwards, unvalidated, as vLLM
// assigns them to the built model.
func AnthropicToChat(a *protocol.AnthropicMessagesRequest) (*protocol.ChatCompletionRequest, error) {
	req, err := anthropicBase(a, func(b *objBuilder) {
		mt := strconv.Itoa(a.MaxTokens)
		b.raw("max_tokens", json.RawMessage(mt))
		b.raw("max_completion_tokens", json.RawMessage(mt))
		if a.StopSequences != nil {
			b.value("stop", a.StopSequences)
		}
		b.raw("temperature", a.Temperature)
		b.raw("top_p", a.TopP)
		b.raw("top_k", a.TopK)
		b.raw("kv_transfer_params", a.KVTransferParams)
		b.raw("ec_transfer_params", a.ECTransferParams)
		b.raw("chat_template_kwargs", a.ChatTemplateArgs)
		b.raw("vllm_xargs", a.VLLMXargs)
	})
	if err != nil {
		return nil, err
	}
	if a.Stream {
		t := true
		req.Stream = &t
		req.StreamOptions = &protocol.StreamOptions{IncludeUsage: &t, ContinuousUsageStats: &t}
	}
	if oc := a.OutputConfig; oc != nil {
		if oc.FormatType != "" && len(oc.Schema) > 2 && !isEmptyObject(oc.Schema) {
			var f objBuilder
			f.str("name", oc.FormatType)
			f.raw("schema", oc.Schema)
			var rf objBuilder
			rf.str("type", oc.FormatType)
			rf.raw("json_schema", f.bytes())
			req.ResponseFormat = rf.bytes()
		}
		if oc.Effort != nil {
			req.ReasoningEffort = oc.Effort
		}
	}
	anthropicTools(req, a)
	return req, nil
}

// AnthropicCountTokensToChat converts a count_tokens request as vLLM does
// for AnthropicCountTokensRequest: the chat request has only model,
// messages and chat_template_kwargs, then tool_choice and tools.
func AnthropicCountTokensToChat(a *protocol.AnthropicMessagesRequest) (*protocol.ChatCompletionRequest, error) {
	req, err := anthropicBase(a, func(b *objBuilder) { b.raw("chat_template_kwargs", a.ChatTemplateArgs) })
	if err != nil {
		return nil, err
	}
	anthropicTools(req, a)
	return req, nil
}

// anthropicBase is the chat request vLLM constructs (and so validates):
// model, the converted messages, then the members fields adds.
func anthropicBase(a *protocol.AnthropicMessagesRequest, fields func(*objBuilder)) (*protocol.ChatCompletionRequest, error) {
	msgs, err := anthropicMessages(a)
	if err != nil {
		return nil, err
	}
	var b objBuilder
	b.str("model", a.Model)
	b.raw("messages", msgs)
	fields(&b)
	return protocol.DecodeChatCompletionRequest(b.bytes())
}

// anthropicTools sets tool_choice and tools on the built chat request
// (_convert_tool_choice, _convert_tools), unvalidated as vLLM assigns them.
func anthropicTools(req *protocol.ChatCompletionRequest, a *protocol.AnthropicMessagesRequest) {
	req.ToolChoice = anthropicToolChoice(a.ToolChoice)
	if !a.HaveTools {
		return
	}
	req.Tools = make([]json.RawMessage, 0, len(a.Tools))
	for _, t := range a.Tools {
		var fn objBuilder
		fn.str("name", t.Name)
		fn.value("description", t.Description)
		fn.raw("parameters", t.InputSchema)
		fn.value("defer_loading", t.DeferLoading)
		var tool objBuilder
		tool.str("type", "function")
		tool.raw("function", fn.bytes())
		req.Tools = append(req.Tools, tool.bytes())
	}
	if req.ToolChoice.Kind == protocol.ToolChoiceUnset {
		req.ToolChoice = protocol.ToolChoice{Kind: protocol.ToolChoiceAuto}
	}
}

func anthropicToolChoice(tc *protocol.AnthropicToolChoice) protocol.ToolChoice {
	if tc == nil {
		return protocol.ToolChoice{}
	}
	switch tc.Type {
	case "auto":
		return protocol.ToolChoice{Kind: protocol.ToolChoiceAuto}
	case "any":
		return protocol.ToolChoice{Kind: protocol.ToolChoiceRequired}
	case "none":
		return protocol.ToolChoice{Kind: protocol.ToolChoiceNone}
	}
	// The validator refused a "tool" choice without a name.
	return protocol.ToolChoice{Kind: protocol.ToolChoiceNamed, Name: *tc.Name}
}

// anthropicMessages is the chat messages list: a system message with the
// system field's text first, then the messages in order, their blocks
// mapped to chat content parts, tool calls, reasoning and tool messages.
func anthropicMessages(a *protocol.AnthropicMessagesRequest) (json.RawMessage, error) {
	var out [][]byte
	var system []string
	if a.SystemText != nil && *a.SystemText != "" {
		system = append(system, *a.SystemText)
	}
	system = appendSystemBlocks(system, a.SystemBlocks)
	if len(system) > 0 {
		out = append(out, systemMessage(system))
	}
	for _, m := range a.Messages {
		if m.Role == "system" {
			// A system message inside messages keeps its position (so that
			// the prompt prefix before it stays cacheable); one left empty
			// once the billing header is stripped is dropped.
			var parts []string
			if m.Text != nil {
				if *m.Text != "" && !strings.HasPrefix(*m.Text, billingHeader) {
					parts = append(parts, *m.Text)
				}
			} else {
				parts = appendSystemBlocks(parts, m.Blocks)
			}
			if len(parts) > 0 {
				out = append(out, systemMessage(parts))
			}
			continue
		}
		msg, extra, err := anthropicMessage(m)
		if err != nil {
			return nil, err
		}
		out = append(out, extra...)
		if msg != nil {
			out = append(out, msg)
		}
	}
	return json.RawMessage(append(append([]byte{'['}, bytes.Join(out, []byte{','})...), ']')), nil
}

func systemMessage(parts []string) []byte {
	var b objBuilder
	b.str("role", "system")
	b.str("content", strings.Join(parts, ""))
	return b.bytes()
}

func appendSystemBlocks(parts []string, blocks []protocol.AnthropicContentBlock) []string {
	for _, b := range blocks {
		if b.Type == "text" && b.Text != nil && *b.Text != "" && !strings.HasPrefix(*b.Text, billingHeader) {
			parts = append(parts, *b.Text)
		}
	}
	return parts
}

// anthropicMessage converts one non-system message. extra holds the tool
// messages its tool_result blocks produced, which vLLM appends before the
// message itself; msg is nil for a user message left without content.
func anthropicMessage(m protocol.AnthropicMessage) (msg []byte, extra [][]byte, err error) {
	var b objBuilder
	b.str("role", m.Role)
	if m.Text != nil {
		b.str("content", *m.Text)
		return b.bytes(), nil, nil
	}
	var parts, toolCalls [][]byte
	var reasoning []string
	for _, blk := range m.Blocks {
		switch blk.Type {
		case "text":
			if blk.Text != nil && *blk.Text != "" {
				parts = append(parts, textPart(*blk.Text))
			}
		case "image":
			if len(blk.Source) > 0 && !isEmptyObject(blk.Source) {
				parts = append(parts, imagePart(imageSourceURL(blk.Source)))
			}
		case "thinking":
			if blk.Thinking != nil {
				reasoning = append(reasoning, *blk.Thinking)
			}
		case "tool_use":
			tc, err := toolUseCall(blk)
			if err != nil {
				return nil, nil, err
			}
			toolCalls = append(toolCalls, tc)
		case "tool_result":
			if m.Role == "user" {
				extra = append(extra, userToolResult(blk)...)
			} else {
				parts = append(parts, textPart("Tool result: "+pyStrOfContent(blk)))
			}
		}
		// redacted_thinking and tool_reference blocks are accepted and dropped.
	}
	hasContent := false
	if len(reasoning) > 0 {
		b.str("reasoning", strings.Join(reasoning, ""))
	}
	if len(toolCalls) > 0 {
		b.raw("tool_calls", joinArray(toolCalls))
	}
	if len(parts) > 0 {
		hasContent = true
		var single struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if len(parts) == 1 && json.Unmarshal(parts[0], &single) == nil && single.Type == "text" {
			b.str("content", single.Text)
		} else {
			b.raw("content", joinArray(parts))
		}
	}
	if m.Role == "user" && !hasContent {
		return nil, extra, nil
	}
	return b.bytes(), extra, nil
}

// toolUseCall is a tool_use block as a chat tool call; the arguments are
// Python's json.dumps of the input, as vLLM writes them.
func toolUseCall(blk protocol.AnthropicContentBlock) ([]byte, error) {
	id := ""
	if blk.ID != nil {
		id = *blk.ID
	}
	if id == "" {
		id = fmt.Sprintf("call_%d", time.Now().Unix())
	}
	input := blk.Input
	if len(input) == 0 || isEmptyObject(input) {
		input = json.RawMessage("{}")
	}
	args, err := pyJSONDumps(input)
	if err != nil {
		return nil, fmt.Errorf("tool_use input: %w", err)
	}
	name := ""
	if blk.Name != nil {
		name = *blk.Name
	}
	var fn objBuilder
	fn.str("name", name)
	fn.str("arguments", args)
	var b objBuilder
	b.str("id", id)
	b.str("type", "function")
	b.raw("function", fn.bytes())
	return b.bytes(), nil
}

// userToolResult is a user tool_result block as vLLM converts it: a tool
// message with the text (blocks joined by newlines), then a user message
// with its images and a tool message with its tool references, if any.
func userToolResult(blk protocol.AnthropicContentBlock) [][]byte {
	text := ""
	var images, refs [][]byte
	switch {
	case blk.ContentText != nil:
		text = *blk.ContentText
	case blk.ContentList != nil:
		var texts []string
		for _, item := range blk.ContentList {
			var members map[string]json.RawMessage
			if json.Unmarshal(item, &members) != nil {
				continue
			}
			switch jsonStr(members["type"]) {
			case "text":
				texts = append(texts, jsonStr(members["text"]))
			case "image":
				src := members["source"]
				if jsonKindOf(src) != '{' {
					src = json.RawMessage("{}")
				}
				if u := imageSourceURL(src); u != "" {
					images = append(images, imagePart(u))
				}
			case "tool_reference":
				name := jsonStr(members["tool_name"])
				if name == "" {
					name = jsonStr(members["name"])
				}
				if name != "" {
					var r objBuilder
					r.str("type", "tool_reference")
					r.str("name", name)
					refs = append(refs, r.bytes())
				}
			}
		}
		text = strings.Join(texts, "\n")
	}
	id := ""
	if blk.ToolUseID != nil {
		id = *blk.ToolUseID
	}
	var tool objBuilder
	tool.str("role", "tool")
	tool.str("tool_call_id", id)
	tool.str("content", text)
	out := [][]byte{tool.bytes()}
	if len(images) > 0 {
		var u objBuilder
		u.str("role", "user")
		u.raw("content", joinArray(images))
		out = append(out, u.bytes())
	}
	if len(refs) > 0 {
		var r objBuilder
		r.str("role", "tool")
		r.str("tool_call_id", id)
		r.raw("content", joinArray(refs))
		out = append(out, r.bytes())
	}
	return out
}

// imageSourceURL is vLLM's _convert_image_source_to_url: a url source's
// url, anything else a base64 data URI (media type image/jpeg by default).
func imageSourceURL(src json.RawMessage) string {
	var members map[string]json.RawMessage
	_ = json.Unmarshal(src, &members)
	if jsonStr(members["type"]) == "url" {
		if u, ok := members["url"]; ok {
			return pyStr(u)
		}
		return ""
	}
	media := "image/jpeg"
	if mt, ok := members["media_type"]; ok {
		media = pyStr(mt)
	}
	data := ""
	if d, ok := members["data"]; ok {
		data = pyStr(d)
	}
	return "data:" + media + ";base64," + data
}

// pyStrOfContent is Python's `str(block.content) if block.content else ""`.
func pyStrOfContent(blk protocol.AnthropicContentBlock) string {
	switch {
	case blk.ContentText != nil:
		return *blk.ContentText
	case len(blk.ContentList) > 0:
		return pyStr(joinArray(rawList(blk.ContentList)))
	}
	return ""
}

func rawList(items []json.RawMessage) [][]byte {
	out := make([][]byte, len(items))
	for i, it := range items {
		out[i] = it
	}
	return out
}

// pyStr is Python's str() of the value json.loads makes of raw: strings
// as they are, everything else as its repr.
func pyStr(raw json.RawMessage) string {
	if s, ok := anthropicString(raw); ok {
		return s
	}
	return string(appendPyRepr(nil, raw))
}

// appendPyRepr appends Python's repr of a JSON value (dicts and lists as
// Python prints them, keys in document order).
func appendPyRepr(dst []byte, raw json.RawMessage) []byte {
	raw = bytes.TrimSpace(raw)
	switch jsonKindOf(raw) {
	case '{':
		members, err := objectMembers(raw)
		if err != nil {
			return append(dst, raw...)
		}
		dst = append(dst, '{')
		for i, m := range members {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = pyfmt.AppendStrRepr(dst, m.key, `\ufffd`)
			dst = append(dst, ": "...)
			dst = appendPyRepr(dst, m.value)
		}
		return append(dst, '}')
	case '[':
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return append(dst, raw...)
		}
		dst = append(dst, '[')
		for i, it := range items {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendPyRepr(dst, it)
		}
		return append(dst, ']')
	case '"':
		s, _ := anthropicString(raw)
		return pyfmt.AppendStrRepr(dst, s, `\ufffd`)
	case 't':
		return append(dst, "True"...)
	case 'f':
		return append(dst, "False"...)
	case 'n':
		return append(dst, "None"...)
	}
	if out, ok := pyfmt.AppendNumberLiteral(dst, string(raw)); ok {
		return out
	}
	return append(dst, raw...)
}

func textPart(text string) []byte {
	var b objBuilder
	b.str("type", "text")
	b.str("text", text)
	return b.bytes()
}

func imagePart(url string) []byte {
	var u objBuilder
	u.str("url", url)
	var b objBuilder
	b.str("type", "image_url")
	b.raw("image_url", u.bytes())
	return b.bytes()
}

func joinArray(items [][]byte) json.RawMessage {
	return json.RawMessage(append(append([]byte{'['}, bytes.Join(items, []byte{','})...), ']'))
}

func jsonKindOf(raw []byte) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

func anthropicString(raw json.RawMessage) (string, bool) {
	if jsonKindOf(raw) != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// jsonStr is raw as a string, "" when it is not one.
func jsonStr(raw json.RawMessage) string {
	s, _ := anthropicString(raw)
	return s
}

func isEmptyObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && len(m) == 0
}

// objBuilder writes a JSON object member by member, in call order.
type objBuilder struct{ buf []byte }

func (b *objBuilder) key(k string) {
	if len(b.buf) == 0 {
		b.buf = append(b.buf, '{')
	} else {
		b.buf = append(b.buf, ',')
	}
	kb, _ := json.Marshal(k)
	b.buf = append(b.buf, kb...)
	b.buf = append(b.buf, ':')
}

func (b *objBuilder) str(k, v string) {
	b.key(k)
	vb, _ := json.Marshal(v)
	b.buf = append(b.buf, vb...)
}

// raw adds k with the JSON value v; a nil v is skipped.
func (b *objBuilder) raw(k string, v json.RawMessage) {
	if v == nil {
		return
	}
	b.key(k)
	b.buf = append(b.buf, v...)
}

// value adds k with v marshalled (a nil pointer is null).
func (b *objBuilder) value(k string, v any) {
	b.key(k)
	vb, _ := json.Marshal(v)
	b.buf = append(b.buf, vb...)
}

func (b *objBuilder) bytes() json.RawMessage {
	if len(b.buf) == 0 {
		return json.RawMessage("{}")
	}
	return json.RawMessage(append(b.buf, '}'))
}
