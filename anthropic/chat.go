package anthropic

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
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
	req, err := anthropicBase(a, func(b *chatBody) {
		mt := strconv.Itoa(a.MaxTokens)
		b.add("max_tokens", &wire.Node{Kind: wire.Number, S: mt})
		b.add("max_completion_tokens", &wire.Node{Kind: wire.Number, S: mt})
		if a.StopSequences != nil {
			stop := &wire.Node{Kind: wire.Array, Arr: make([]*wire.Node, len(a.StopSequences))}
			for i, s := range a.StopSequences {
				stop.Arr[i] = &wire.Node{Kind: wire.String, S: s, Raw: wire.AppendString(nil, s)} // read as text
			}
			b.add("stop", stop)
		}
		b.add("temperature", a.Temperature)
		b.add("top_p", a.TopP)
		b.add("top_k", a.TopK)
		b.add("kv_transfer_params", a.KVTransferParams)
		b.add("ec_transfer_params", a.ECTransferParams)
		b.add("chat_template_kwargs", a.ChatTemplateArgs)
		b.add("vllm_xargs", a.VLLMXargs)
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
		if oc.FormatType != "" && !isEmptyObject(oc.Schema) {
			js := &wire.Node{Kind: wire.Object, Keys: []string{"name", "schema"},
				Vals: []*wire.Node{wire.StringNode(oc.FormatType), oc.Schema}}
			req.ResponseFormat = &wire.Node{Kind: wire.Object, Keys: []string{"type", "json_schema"},
				Vals: []*wire.Node{wire.StringNode(oc.FormatType), js}}
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
	req, err := anthropicBase(a, func(b *chatBody) { b.add("chat_template_kwargs", a.ChatTemplateArgs) })
	if err != nil {
		return nil, err
	}
	anthropicTools(req, a)
	return req, nil
}

// anthropicBase is the chat request vLLM constructs (and so validates):
// model, the converted messages, then the members fields adds.
func anthropicBase(a *MessagesRequest, fields func(*chatBody)) (*protocol.ChatCompletionRequest, error) {
	msgs := anthropicMessages(a)
	// The messages are built typed; pydantic's check of them (a list of
	// dicts) holds for every message built, so they join the request
	// after validation.
	var b chatBody
	b.add("model", wire.StringNode(a.Model))
	b.add("messages", &wire.Node{Kind: wire.Array})
	fields(&b)
	req, err := b.decode()
	if err != nil {
		return nil, err
	}
	req.Messages = msgs
	return req, nil
}

// chatBody is the body of the chat request vLLM constructs, as the tree
// the chat decoder reads: the Messages request's members as the client's
// trees, the values built here with their text too, as a parse would
// have made them (pylax reads a member's text as well as its tree).
type chatBody struct {
	keys []string
	vals []*wire.Node
}

// add appends member k; a nil v is skipped. A value built here gets
// its text.
func (b *chatBody) add(k string, v *wire.Node) {
	if v == nil {
		return
	}
	if v.Raw == nil {
		v.Raw = wire.AppendNode(nil, v)
	}
	b.keys = append(b.keys, k)
	b.vals = append(b.vals, v)
}

// decode validates the body as the chat request. Its text is written
// only for the errors that quote the whole body.
func (b *chatBody) decode() (*protocol.ChatCompletionRequest, error) {
	root := &wire.Node{Kind: wire.Object, Keys: b.keys, Vals: b.vals}
	for _, v := range b.vals {
		root.Depth = max(root.Depth, v.Depth+1)
	}
	root.Raw = wire.AppendNode(nil, root)
	return protocol.DecodeChatCompletionTree(root.Raw, root)
}

// anthropicTools sets tool_choice and tools on the built chat request
// (_convert_tool_choice, _convert_tools), unvalidated as vLLM assigns them.
func anthropicTools(req *protocol.ChatCompletionRequest, a *MessagesRequest) {
	req.ToolChoice = anthropicToolChoice(a.ToolChoice)
	if !a.HaveTools {
		return
	}
	req.Tools = make([]protocol.Tool, 0, len(a.Tools))
	for _, t := range a.Tools {
		fn := protocol.FunctionDefinition{Name: t.Name, Description: t.Description,
			Extra: []protocol.Member{{Key: "defer_loading", Value: boolOrNull(t.DeferLoading)}}}
		if t.InputSchema != nil {
			fn.Parameters = t.InputSchema
		}
		req.Tools = append(req.Tools, protocol.Tool{Type: "function", Function: fn})
	}
	if req.ToolChoice.Kind == protocol.ToolChoiceUnset {
		req.ToolChoice = protocol.ToolChoice{Kind: protocol.ToolChoiceAuto}
	}
}

// boolOrNull is an optional bool as a JSON value.
func boolOrNull(b *bool) *wire.Node {
	if b == nil {
		return wire.NullNode
	}
	return &wire.Node{Kind: wire.Bool, B: *b}
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
func anthropicMessages(a *MessagesRequest) []protocol.Message {
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
		msg, extra := anthropicMessage(m)
		out = append(out, extra...)
		if msg != nil {
			out = append(out, *msg)
		}
	}
	return out
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
func anthropicMessage(m Message) (msg *protocol.Message, extra []protocol.Message) {
	if m.Text != nil {
		out := protocol.TextMessage(m.Role, *m.Text)
		return &out, nil
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
			if !isEmptyObject(blk.Source) {
				parts = append(parts, protocol.ImagePart(imageSourceURL(blk.Source)))
			}
		case "thinking":
			if blk.Thinking != nil {
				reasoning = append(reasoning, *blk.Thinking)
			}
		case "tool_use":
			toolCalls = append(toolCalls, toolUseCall(blk))
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
		return nil, extra
	}
	return out, extra
}

// objectNode is a JSON object of the given members in order, built by code.
func objectNode(keys []string, vals ...*wire.Node) *wire.Node {
	return &wire.Node{Kind: wire.Object, Keys: keys, Vals: vals}
}

// toolUseCall is a tool_use block as a chat tool call; the arguments are
// Python's json.dumps of the input, as vLLM writes them.
func toolUseCall(blk ContentBlock) *wire.Node {
	id := ""
	if blk.ID != nil {
		id = *blk.ID
	}
	if id == "" {
		id = fmt.Sprintf("call_%d", time.Now().Unix())
	}
	args := "{}"
	if !isEmptyObject(blk.Input) {
		args = string(pylax.AppendPyDumps(nil, blk.Input))
	}
	name := ""
	if blk.Name != nil {
		name = *blk.Name
	}
	fn := objectNode([]string{"name", "arguments"}, wire.StringNode(name), wire.StringNode(args))
	return objectNode([]string{"id", "type", "function"}, wire.StringNode(id), wire.StringNode("function"), fn)
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
			switch str(item, "type") {
			case "text":
				texts = append(texts, str(item, "text"))
			case "image":
				src, _ := item.Get("source")
				if src == nil || src.Kind != wire.Object {
					src = emptyObject
				}
				if u := imageSourceURL(src); u != "" {
					images = append(images, protocol.ImagePart(u))
				}
			case "tool_reference":
				name := str(item, "tool_name")
				if name == "" {
					name = str(item, "name")
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
func imageSourceURL(src *wire.Node) string {
	if str(src, "type") == "url" {
		if u, ok := src.Get("url"); ok {
			return pyStr(u)
		}
		return ""
	}
	media := "image/jpeg"
	if mt, ok := src.Get("media_type"); ok {
		media = pyStr(mt)
	}
	data := ""
	if d, ok := src.Get("data"); ok {
		data = pyStr(d)
	}
	return "data:" + media + ";base64," + data
}

// pyStrOfContent is Python's `str(block.content) if block.content else ""`.
func pyStrOfContent(blk ContentBlock) string {
	switch {
	case blk.ContentText != nil:
		return *blk.ContentText
	case len(blk.ContentList) > 0:
		return pyStr(&wire.Node{Kind: wire.Array, Arr: blk.ContentList})
	}
	return ""
}

// emptyObject is {}, what vLLM reads an image without a source dict as.
var emptyObject = &wire.Node{Kind: wire.Object, Raw: []byte("{}")}

// text is the JSON text of n, nil for nil: members handed on as sent.
// A parsed node's is its own text, not copied: readers only read it.
func text(n *wire.Node) []byte {
	switch {
	case n == nil:
		return nil
	case n.Raw != nil:
		return n.Raw
	}
	return wire.AppendNode(nil, n)
}

// str is member key of the object n when it is a string, else "".
func str(n *wire.Node, key string) string {
	if v, ok := n.Get(key); ok && v.Kind == wire.String {
		return v.S
	}
	return ""
}

// isEmptyObject reports whether the object n is absent or {}.
func isEmptyObject(n *wire.Node) bool { return n == nil || len(n.Keys) == 0 }
