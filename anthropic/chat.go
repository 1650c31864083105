package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
)

// billingHeader starts the system block Claude Code adds with a per-request
// hash; vLLM drops it so that prefix caching keeps working.
const billingHeader = "x-anthropic-billing-header"

// ToChat converts a Messages request into the chat completion
// request vLLM's AnthropicServingMessages builds from it
// (_convert_anthropic_to_openai_request, renamed to_chat_completion_request
// by vllm PR #45803), so /v1/messages/render renders through the one chat
// pipeline. The base request goes through chat validation, as vLLM's
// constructor call does; stream, response_format, reasoning_effort,
// tool_choice and tools are assigned afterwards, unvalidated, as vLLM
// assigns them to the built model.
func ToChat(a *MessagesRequest) (*protocol.ChatCompletionRequest, error) {
	req, err := anthropicBase(a, func(b *wire.ObjectBuilder) {
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
			var f wire.ObjectBuilder
			f.Str("name", oc.FormatType)
			f.Raw("schema", oc.Schema)
			var rf wire.ObjectBuilder
			rf.Str("type", oc.FormatType)
			rf.Raw("json_schema", f.Bytes())
			req.ResponseFormat = rf.Bytes()
		}
		if oc.Effort != nil {
			req.ReasoningEffort = oc.Effort
		}
	}
	anthropicTools(req, a)
	return req, nil
}

// CountTokensToChat converts a count_tokens request as vLLM does
// for AnthropicCountTokensRequest: the chat request has only model,
// messages and chat_template_kwargs, then tool_choice and tools.
func CountTokensToChat(a *MessagesRequest) (*protocol.ChatCompletionRequest, error) {
	req, err := anthropicBase(a, func(b *wire.ObjectBuilder) { b.Raw("chat_template_kwargs", a.ChatTemplateArgs) })
	if err != nil {
		return nil, err
	}
	anthropicTools(req, a)
	return req, nil
}

// anthropicBase is the chat request vLLM constructs (and so validates):
// model, the converted messages, then the members fields adds.
func anthropicBase(a *MessagesRequest, fields func(*wire.ObjectBuilder)) (*protocol.ChatCompletionRequest, error) {
	msgs, err := anthropicMessages(a)
	if err != nil {
		return nil, err
	}
	// The messages are built typed; pydantic's check of them (a list of
	// dicts) holds for every message built, so they join the request
	// after validation.
	var b wire.ObjectBuilder
	b.Str("model", a.Model)
	b.Raw("messages", json.RawMessage("[]"))
	fields(&b)
	req, err := protocol.DecodeChatCompletionRequest(b.Bytes())
	if err != nil {
		return nil, err
	}
	req.Messages = msgs
	return req, nil
}

// anthropicTools sets tool_choice and tools on the built chat request
// (_convert_tool_choice, _convert_tools), unvalidated as vLLM assigns them.
func anthropicTools(req *protocol.ChatCompletionRequest, a *MessagesRequest) {
	req.ToolChoice = anthropicToolChoice(a.ToolChoice)
	if !a.HaveTools {
		return
	}
	req.Tools = make([]json.RawMessage, 0, len(a.Tools))
	for _, t := range a.Tools {
		var fn wire.ObjectBuilder
		fn.Str("name", t.Name)
		fn.Value("description", t.Description)
		fn.Raw("parameters", t.InputSchema)
		fn.Value("defer_loading", t.DeferLoading)
		var tool wire.ObjectBuilder
		tool.Str("type", "function")
		tool.Raw("function", fn.Bytes())
		req.Tools = append(req.Tools, tool.Bytes())
	}
	if req.ToolChoice.Kind == protocol.ToolChoiceUnset {
		req.ToolChoice = protocol.ToolChoice{Kind: protocol.ToolChoiceAuto}
	}
}

func anthropicToolChoice(tc *ToolChoice) protocol.ToolChoice {
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
func anthropicMessages(a *MessagesRequest) ([]protocol.Message, error) {
	var out []protocol.Message
	var system []string
	if a.SystemText != nil && *a.SystemText != "" {
		system = append(system, *a.SystemText)
	}
	system = appendSystemBlocks(system, a.SystemBlocks)
	if len(system) > 0 {
		out = append(out, protocol.TextMessage("system", strings.Join(system, "")))
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
				out = append(out, protocol.TextMessage("system", strings.Join(parts, "")))
			}
			continue
		}
		msg, extra, err := anthropicMessage(m)
		if err != nil {
			return nil, err
		}
		out = append(out, extra...)
		if msg != nil {
			out = append(out, *msg)
		}
	}
	return out, nil
}

func appendSystemBlocks(parts []string, blocks []ContentBlock) []string {
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
func anthropicMessage(m Message) (msg *protocol.Message, extra []protocol.Message, err error) {
	if m.Text != nil {
		out := protocol.TextMessage(m.Role, *m.Text)
		return &out, nil, nil
	}
	out := &protocol.Message{Role: m.Role, HasRole: true}
	var parts []protocol.ContentPart
	var toolCalls []*wire.Node
	var reasoning []string
	for _, blk := range m.Blocks {
		switch blk.Type {
		case "text":
			if blk.Text != nil && *blk.Text != "" {
				parts = append(parts, protocol.TextPart(*blk.Text))
			}
		case "image":
			if len(blk.Source) > 0 && !isEmptyObject(blk.Source) {
				parts = append(parts, protocol.ImagePart(imageSourceURL(blk.Source)))
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
				parts = append(parts, protocol.TextPart("Tool result: "+pyStrOfContent(blk)))
			}
		}
		// redacted_thinking and tool_reference blocks are accepted and dropped.
	}
	if len(reasoning) > 0 {
		out.Reasoning = wire.StringNode(strings.Join(reasoning, ""))
	}
	if len(toolCalls) > 0 {
		out.ToolCalls = &wire.Node{Kind: wire.Array, Arr: toolCalls}
	}
	switch {
	case len(parts) == 1 && parts[0].Kind == protocol.PartText:
		out.Content = protocol.Content{Kind: protocol.ContentText, Text: parts[0].Text}
	case len(parts) > 0:
		out.Content = protocol.Content{Kind: protocol.ContentParts, Parts: parts}
	case m.Role == "user":
		return nil, extra, nil
	}
	return out, extra, nil
}

// objectNode is a JSON object of the given members in order, built by code.
func objectNode(keys []string, vals ...*wire.Node) *wire.Node {
	return &wire.Node{Kind: wire.Object, Keys: keys, Vals: vals}
}

// toolUseCall is a tool_use block as a chat tool call; the arguments are
// Python's json.dumps of the input, as vLLM writes them.
func toolUseCall(blk ContentBlock) (*wire.Node, error) {
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
	fn := objectNode([]string{"name", "arguments"}, wire.StringNode(name), wire.StringNode(args))
	return objectNode([]string{"id", "type", "function"}, wire.StringNode(id), wire.StringNode("function"), fn), nil
}

// userToolResult is a user tool_result block as vLLM converts it: a tool
// message with the text (blocks joined by newlines), then a user message
// with its images and a tool message with its tool references, if any.
func userToolResult(blk ContentBlock) []protocol.Message {
	text := ""
	var images, refs []protocol.ContentPart
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
					images = append(images, protocol.ImagePart(u))
				}
			case "tool_reference":
				name := jsonStr(members["tool_name"])
				if name == "" {
					name = jsonStr(members["name"])
				}
				if name != "" {
					refs = append(refs, protocol.ToolReferencePart(name))
				}
			}
		}
		text = strings.Join(texts, "\n")
	}
	id := ""
	if blk.ToolUseID != nil {
		id = *blk.ToolUseID
	}
	tool := protocol.TextMessage("tool", text)
	tool.ToolCallID = wire.StringNode(id)
	out := []protocol.Message{tool}
	if len(images) > 0 {
		out = append(out, protocol.Message{Role: "user", HasRole: true,
			Content: protocol.Content{Kind: protocol.ContentParts, Parts: images}})
	}
	if len(refs) > 0 {
		out = append(out, protocol.Message{Role: "tool", HasRole: true, ToolCallID: wire.StringNode(id),
			Content: protocol.Content{Kind: protocol.ContentParts, Parts: refs}})
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
			return render.PyStr(u)
		}
		return ""
	}
	media := "image/jpeg"
	if mt, ok := members["media_type"]; ok {
		media = render.PyStr(mt)
	}
	data := ""
	if d, ok := members["data"]; ok {
		data = render.PyStr(d)
	}
	return "data:" + media + ";base64," + data
}

// pyStrOfContent is Python's `str(block.content) if block.content else ""`.
func pyStrOfContent(blk ContentBlock) string {
	switch {
	case blk.ContentText != nil:
		return *blk.ContentText
	case len(blk.ContentList) > 0:
		return render.PyStr(joinArray(rawList(blk.ContentList)))
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

func joinArray(items [][]byte) json.RawMessage {
	return json.RawMessage(append(append([]byte{'['}, bytes.Join(items, []byte{','})...), ']'))
}

// jsonStr is raw as a string, "" when it is not one.
func jsonStr(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func isEmptyObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && len(m) == 0
}
