package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
)

// The conversion before messages were typed: it wrote each chat message as
// JSON, which the chat request's decoder then read. The differential test
// holds the typed conversion to it.

// anthropicMessages is the chat messages list: a system message with the
// system field's text first, then the messages in order, their blocks
// mapped to chat content parts, tool calls, reasoning and tool messages.
func refAnthropicMessages(a *refRequest) (json.RawMessage, error) {
	var out [][]byte
	var system []string
	if a.SystemText != nil && *a.SystemText != "" {
		system = append(system, *a.SystemText)
	}
	system = refAppendSystemBlocks(system, a.SystemBlocks)
	if len(system) > 0 {
		out = append(out, refSystemMessage(system))
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
				parts = refAppendSystemBlocks(parts, m.Blocks)
			}
			if len(parts) > 0 {
				out = append(out, refSystemMessage(parts))
			}
			continue
		}
		msg, extra, err := refAnthropicMessage(m)
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

func refSystemMessage(parts []string) []byte {
	var b wire.ObjectBuilder
	b.Str("role", "system")
	b.Str("content", strings.Join(parts, ""))
	return b.Bytes()
}

// anthropicMessage converts one non-system message. extra holds the tool
// messages its tool_result blocks produced, which vLLM appends before the
// message itself; msg is nil for a user message left without content.
func refAnthropicMessage(m refMessage) (msg []byte, extra [][]byte, err error) {
	var b wire.ObjectBuilder
	b.Str("role", m.Role)
	if m.Text != nil {
		b.Str("content", *m.Text)
		return b.Bytes(), nil, nil
	}
	var parts, toolCalls [][]byte
	var reasoning []string
	for _, blk := range m.Blocks {
		switch blk.Type {
		case "text":
			if blk.Text != nil && *blk.Text != "" {
				parts = append(parts, refTextPart(*blk.Text))
			}
		case "image":
			if len(blk.Source) > 0 && !refIsEmptyObject(blk.Source) {
				parts = append(parts, refImagePart(refImageSourceURL(blk.Source)))
			}
		case "thinking":
			if blk.Thinking != nil {
				reasoning = append(reasoning, *blk.Thinking)
			}
		case "tool_use":
			tc, err := refToolUseCall(blk)
			if err != nil {
				return nil, nil, err
			}
			toolCalls = append(toolCalls, tc)
		case "tool_result":
			if m.Role == "user" {
				extra = append(extra, refUserToolResult(blk)...)
			} else {
				parts = append(parts, refTextPart("Tool result: "+refPyStrOfContent(blk)))
			}
		}
		// redacted_thinking and tool_reference blocks are accepted and dropped.
	}
	hasContent := false
	if len(reasoning) > 0 {
		b.Str("reasoning", strings.Join(reasoning, ""))
	}
	if len(toolCalls) > 0 {
		b.Raw("tool_calls", refJoinArray(toolCalls))
	}
	if len(parts) > 0 {
		hasContent = true
		var single struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if len(parts) == 1 && json.Unmarshal(parts[0], &single) == nil && single.Type == "text" {
			b.Str("content", single.Text)
		} else {
			b.Raw("content", refJoinArray(parts))
		}
	}
	if m.Role == "user" && !hasContent {
		return nil, extra, nil
	}
	return b.Bytes(), extra, nil
}

// toolUseCall is a tool_use block as a chat tool call; the arguments are
// Python's json.dumps of the input, as vLLM writes them.
func refToolUseCall(blk refBlock) ([]byte, error) {
	id := ""
	if blk.ID != nil {
		id = *blk.ID
	}
	if id == "" {
		id = fmt.Sprintf("call_%d", time.Now().Unix())
	}
	input := blk.Input
	if len(input) == 0 || refIsEmptyObject(input) {
		input = json.RawMessage("{}")
	}
	// The old conversion wrote a repeated key twice (render.PyJSONDumps
	// walks the text's tokens); the reference writes the dict json.loads
	// makes, as vLLM does.
	if n, err := wire.Parse(input); err == nil {
		input = wire.AppendNode(nil, withoutText(n))
	}
	args, err := refPyJSONDumps(input)
	if err != nil {
		return nil, fmt.Errorf("tool_use input: %w", err)
	}
	name := ""
	if blk.Name != nil {
		name = *blk.Name
	}
	var fn wire.ObjectBuilder
	fn.Str("name", name)
	fn.Str("arguments", args)
	var b wire.ObjectBuilder
	b.Str("id", id)
	b.Str("type", "function")
	b.Raw("function", fn.Bytes())
	return b.Bytes(), nil
}

// userToolResult is a user tool_result block as vLLM converts it: a tool
// message with the text (blocks joined by newlines), then a user message
// with its images and a tool message with its tool references, if any.
func refUserToolResult(blk refBlock) [][]byte {
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
			switch refJSONStr(members["type"]) {
			case "text":
				texts = append(texts, refJSONStr(members["text"]))
			case "image":
				src := members["source"]
				if !bytes.HasPrefix(bytes.TrimLeft(src, " \t\r\n"), []byte{'{'}) {
					src = json.RawMessage("{}")
				}
				if u := refImageSourceURL(src); u != "" {
					images = append(images, refImagePart(u))
				}
			case "tool_reference":
				name := refJSONStr(members["tool_name"])
				if name == "" {
					name = refJSONStr(members["name"])
				}
				if name != "" {
					var r wire.ObjectBuilder
					r.Str("type", "tool_reference")
					r.Str("name", name)
					refs = append(refs, r.Bytes())
				}
			}
		}
		text = strings.Join(texts, "\n")
	}
	id := ""
	if blk.ToolUseID != nil {
		id = *blk.ToolUseID
	}
	var tool wire.ObjectBuilder
	tool.Str("role", "tool")
	tool.Str("tool_call_id", id)
	tool.Str("content", text)
	out := [][]byte{tool.Bytes()}
	if len(images) > 0 {
		var u wire.ObjectBuilder
		u.Str("role", "user")
		u.Raw("content", refJoinArray(images))
		out = append(out, u.Bytes())
	}
	if len(refs) > 0 {
		var r wire.ObjectBuilder
		r.Str("role", "tool")
		r.Str("tool_call_id", id)
		r.Raw("content", refJoinArray(refs))
		out = append(out, r.Bytes())
	}
	return out
}

func refTextPart(text string) []byte {
	var b wire.ObjectBuilder
	b.Str("type", "text")
	b.Str("text", text)
	return b.Bytes()
}

func refImagePart(url string) []byte {
	var u wire.ObjectBuilder
	u.Str("url", url)
	var b wire.ObjectBuilder
	b.Str("type", "image_url")
	b.Raw("image_url", u.Bytes())
	return b.Bytes()
}

func refAppendSystemBlocks(parts []string, blocks []refBlock) []string {
	for _, b := range blocks {
		if b.Type == "text" && b.Text != nil && *b.Text != "" && !strings.HasPrefix(*b.Text, billingHeader) {
			parts = append(parts, *b.Text)
		}
	}
	return parts
}

// refImageSourceURL is vLLM's _convert_image_source_to_url over the
// source's text.
func refImageSourceURL(src json.RawMessage) string {
	var members map[string]json.RawMessage
	_ = json.Unmarshal(src, &members)
	if refJSONStr(members["type"]) == "url" {
		if u, ok := members["url"]; ok {
			return pylax.StrOfJSON(u)
		}
		return ""
	}
	media := "image/jpeg"
	if mt, ok := members["media_type"]; ok {
		media = pylax.StrOfJSON(mt)
	}
	data := ""
	if d, ok := members["data"]; ok {
		data = pylax.StrOfJSON(d)
	}
	return "data:" + media + ";base64," + data
}

func refPyStrOfContent(blk refBlock) string {
	switch {
	case blk.ContentText != nil:
		return *blk.ContentText
	case len(blk.ContentList) > 0:
		items := make([][]byte, len(blk.ContentList))
		for i, it := range blk.ContentList {
			items[i] = it
		}
		return pylax.StrOfJSON(refJoinArray(items))
	}
	return ""
}

func refJoinArray(items [][]byte) json.RawMessage {
	return json.RawMessage(append(append([]byte{'['}, bytes.Join(items, []byte{','})...), ']'))
}

func refJSONStr(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func refIsEmptyObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && len(m) == 0
}

// refToChat is ToChat before the request kept its members' trees: the
// sampling members written into the chat body as their text, the schemas
// parsed again from theirs, the messages as the JSON conversion wrote them
// read back by the chat decoder.
func refToChat(a *refRequest, count bool) (*protocol.ChatCompletionRequest, error) {
	msgs, err := refAnthropicMessages(a)
	if err != nil {
		return nil, err
	}
	var b wire.ObjectBuilder
	b.Str("model", a.Model)
	b.Raw("messages", json.RawMessage("[]"))
	if count {
		b.Raw("chat_template_kwargs", a.ChatTemplateArgs)
	} else {
		mt := strconv.Itoa(a.MaxTokens)
		b.Raw("max_tokens", json.RawMessage(mt))
		b.Raw("max_completion_tokens", json.RawMessage(mt))
		if a.StopSequences != nil {
			b.Value("stop", a.StopSequences)
		}
		b.Raw("temperature", a.Temperature)
		b.Raw("top_p", a.TopP)
		b.Raw("top_k", a.TopK)
		b.Raw("kv_transfer_params", a.KVTransferParams)
		b.Raw("ec_transfer_params", a.ECTransferParams)
		b.Raw("chat_template_kwargs", a.ChatTemplateArgs)
		b.Raw("vllm_xargs", a.VLLMXargs)
	}
	req, err := protocol.DecodeChatCompletionRequest(b.Bytes())
	if err != nil {
		return nil, err
	}
	m, err := protocol.DecodeChatCompletionRequest(append(append([]byte(`{"messages":`), msgs...), '}'))
	if err != nil {
		return nil, fmt.Errorf("the JSON conversion %s does not decode: %w", msgs, err)
	}
	req.Messages = m.Messages
	if a.Stream && !count {
		t := true
		req.Stream = &t
		req.StreamOptions = &protocol.StreamOptions{IncludeUsage: &t, ContinuousUsageStats: &t}
	}
	if oc := a.OutputConfig; oc != nil && !count {
		if oc.FormatType != "" && len(oc.Schema) > 2 && !refIsEmptyObject(oc.Schema) {
			var f wire.ObjectBuilder
			f.Str("name", oc.FormatType)
			f.Raw("schema", oc.Schema)
			var rf wire.ObjectBuilder
			rf.Str("type", oc.FormatType)
			rf.Raw("json_schema", f.Bytes())
			req.ResponseFormat, _ = wire.Parse(rf.Bytes())
		}
		if oc.Effort != nil {
			req.ReasoningEffort = oc.Effort
		}
	}
	req.ToolChoice = anthropicToolChoice(a.ToolChoice)
	if !a.HaveTools {
		return req, nil
	}
	req.Tools = make([]protocol.Tool, 0, len(a.Tools))
	for _, t := range a.Tools {
		fn := protocol.FunctionDefinition{Name: t.Name, Description: t.Description,
			Extra: []protocol.Member{{Key: "defer_loading", Value: boolOrNull(t.DeferLoading)}}}
		if t.InputSchema != nil {
			schema, err := wire.Parse(t.InputSchema)
			if err != nil {
				return nil, fmt.Errorf("anthropic: input_schema: %w", err)
			}
			fn.Parameters = schema
		}
		req.Tools = append(req.Tools, protocol.Tool{Type: "function", Function: fn})
	}
	if req.ToolChoice.Kind == protocol.ToolChoiceUnset {
		req.ToolChoice = protocol.ToolChoice{Kind: protocol.ToolChoiceAuto}
	}
	return req, nil
}

// refPyJSONDumps is json.dumps of the value json.loads makes of raw, as the
// replaced conversion wrote a tool_use input: parsed, then written.
func refPyJSONDumps(raw []byte) (string, error) {
	n, err := wire.Parse(raw)
	if err != nil {
		return "", err
	}
	return string(pylax.AppendPyDumps(nil, n)), nil
}
