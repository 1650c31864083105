package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/render"
)

// The conversion before messages were typed: it wrote each chat message as
// JSON, which the chat request's decoder then read. The differential test
// holds the typed conversion to it.

// anthropicMessages is the chat messages list: a system message with the
// system field's text first, then the messages in order, their blocks
// mapped to chat content parts, tool calls, reasoning and tool messages.
func refAnthropicMessages(a *MessagesRequest) (json.RawMessage, error) {
	var out [][]byte
	var system []string
	if a.SystemText != nil && *a.SystemText != "" {
		system = append(system, *a.SystemText)
	}
	system = appendSystemBlocks(system, a.SystemBlocks)
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
				parts = appendSystemBlocks(parts, m.Blocks)
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
func refAnthropicMessage(m Message) (msg []byte, extra [][]byte, err error) {
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
			if len(blk.Source) > 0 && !isEmptyObject(blk.Source) {
				parts = append(parts, refImagePart(imageSourceURL(blk.Source)))
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
				parts = append(parts, refTextPart("Tool result: "+pyStrOfContent(blk)))
			}
		}
		// redacted_thinking and tool_reference blocks are accepted and dropped.
	}
	hasContent := false
	if len(reasoning) > 0 {
		b.Str("reasoning", strings.Join(reasoning, ""))
	}
	if len(toolCalls) > 0 {
		b.Raw("tool_calls", joinArray(toolCalls))
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
			b.Raw("content", joinArray(parts))
		}
	}
	if m.Role == "user" && !hasContent {
		return nil, extra, nil
	}
	return b.Bytes(), extra, nil
}

// toolUseCall is a tool_use block as a chat tool call; the arguments are
// Python's json.dumps of the input, as vLLM writes them.
func refToolUseCall(blk ContentBlock) ([]byte, error) {
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
	args, err := render.PyJSONDumps(input)
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
func refUserToolResult(blk ContentBlock) [][]byte {
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
				if !bytes.HasPrefix(bytes.TrimLeft(src, " \t\r\n"), []byte{'{'}) {
					src = json.RawMessage("{}")
				}
				if u := imageSourceURL(src); u != "" {
					images = append(images, refImagePart(u))
				}
			case "tool_reference":
				name := jsonStr(members["tool_name"])
				if name == "" {
					name = jsonStr(members["name"])
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
		u.Raw("content", joinArray(images))
		out = append(out, u.Bytes())
	}
	if len(refs) > 0 {
		var r wire.ObjectBuilder
		r.Str("role", "tool")
		r.Str("tool_call_id", id)
		r.Raw("content", joinArray(refs))
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
