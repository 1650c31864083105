package responses

import (
	"context"
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
	req, err := passthroughChat(r)
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

// passthroughChat is the chat request of r's members a chat request
// shares (Passthrough) and its model, through the chat request's
// validation. The messages are built typed; pydantic's check of them (a
// list of dicts) holds for every message built, so they join the request
// after validation.
func passthroughChat(r *Request) (*protocol.ChatCompletionRequest, error) {
	body := &wire.Node{Kind: wire.Object}
	if r.Model != nil {
		body.Set("model", wire.StringNode(*r.Model))
	}
	body.Set("messages", &wire.Node{Kind: wire.Array, Raw: []byte("[]")})
	for _, m := range r.Passthrough {
		body.Set(m.Key, m.Value)
	}
	// The body's text is the input of the chat validators' errors; the
	// members are read from the trees the Responses body was decoded to.
	return protocol.DecodeChatCompletionTree(wire.AppendNode(nil, body), body)
}

// shouldContinueFinalMessage is should_continue_final_message: the last
// item is a message or reasoning item still in progress or incomplete.
func shouldContinueFinalMessage(items []InputItem) bool {
	return len(items) > 0 && items[len(items)-1].Continues
}

func responsesMessages(r *Request) ([]protocol.Message, error) {
	var msgs []protocol.Message
	if r.Instructions != nil && *r.Instructions != "" {
		msgs = append(msgs, protocol.TextMessage("system", *r.Instructions))
	}
	if r.InputText != nil {
		msgs = append(msgs, protocol.TextMessage("user", *r.InputText))
	}
	for i := range r.InputItems {
		var prev *protocol.Message
		if len(msgs) > 0 {
			prev = &msgs[len(msgs)-1]
		}
		m, err := responsesItem(&r.InputItems[i], prev)
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
func responsesItem(it *InputItem, prev *protocol.Message) (*protocol.Message, error) {
	if prev != nil && !(prev.HasRole && prev.Role == "assistant") {
		prev = nil
	}
	switch it.Kind {
	case ItemMalformed:
		return nil, &ParamError{Message: "Each input item must be an object"}
	case ItemFunctionCall:
		return functionCallMessage(&it.Call, prev)
	case ItemReasoning:
		return reasoningMessage(&it.Reasoning, prev)
	case ItemFunctionCallOutput:
		out := it.Output.Output
		callID := wire.NullNode
		if it.Output.CallID != nil {
			callID = wire.StringNode(*it.Output.CallID)
		}
		return &protocol.Message{Role: "tool", HasRole: true, Content: protocol.ContentOf(out), ToolCallID: callID,
			Depth: out.Depth + 1}, nil
	case ItemAssistantText:
		if prev != nil && prev.Content.Kind == protocol.ContentNone {
			prev.Content = protocol.Content{Kind: protocol.ContentText, Text: it.Text}
			return nil, nil
		}
		m := protocol.TextMessage("assistant", it.Text)
		return &m, nil
	}
	// Other messages reach the chat parser as given.
	m := protocol.MessageOf(it.Message)
	return &m, nil
}

// functionCallMessage is a function_call item's tool call, appended to
// prev's tool_calls when prev can take it, else a new assistant message.
func functionCallMessage(c *FunctionCall, prev *protocol.Message) (*protocol.Message, error) {
	if !c.Complete {
		return nil, &ParamError{Message: "function_call items need call_id, name and arguments strings"}
	}
	name := c.Name
	if c.Namespace != "" {
		// vLLM bf578e1 flattens a namespaced call as its tools are
		// flattened (flat_namespace_tool_name).
		name = c.Namespace + "__" + name
	}
	fn := objectNode([]string{"name", "arguments"}, wire.StringNode(name), wire.StringNode(c.Arguments))
	call := objectNode([]string{"id", "function", "type"}, wire.StringNode(c.CallID), fn, wire.StringNode("function"))
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
}

// reasoningMessage is a reasoning item's text as prev's reasoning when
// prev has none, else as a new assistant message.
func reasoningMessage(r *ReasoningItem, prev *protocol.Message) (*protocol.Message, error) {
	if !r.Summary {
		// vLLM passes such an item to its chat parser as a message
		// without a role.
		return nil, &ParamError{Message: "reasoning items need a summary list"}
	}
	if r.Encrypted {
		return nil, &render.BadRequestError{Message: "Encrypted content is not supported."}
	}
	if prev != nil && prev.Reasoning.IsNull() {
		prev.Reasoning = wire.StringNode(r.Text)
		return nil, nil
	}
	return &protocol.Message{Role: "assistant", HasRole: true, Reasoning: wire.StringNode(r.Text)}, nil
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
