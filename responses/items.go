package responses

import "github.com/vrender/vrender/internal/wire"

// The input items as the conversion to chat reads them
// (_construct_message_from_response_item, should_continue_final_message),
// each read from the body's tree once, by DecodeRequest.

// ItemKind is the conversion an input item takes.
type ItemKind uint8

const (
	// ItemMessage reaches the chat parser as sent (Message).
	ItemMessage ItemKind = iota
	// ItemAssistantText is an assistant message whose text vLLM takes
	// (Text): a string content or the first content part's text.
	ItemAssistantText
	ItemFunctionCall       // Call
	ItemFunctionCallOutput // Output
	ItemReasoning          // Reasoning
	// ItemMalformed has a member the conversion reads that is neither a
	// string nor null; the conversion refuses it.
	ItemMalformed
)

// InputItem is one item of a list input.
type InputItem struct {
	Kind ItemKind
	// Message is the item as sent (every kind keeps it).
	Message   *wire.Node
	Text      string             // ItemAssistantText
	Call      FunctionCall       // ItemFunctionCall
	Output    FunctionCallOutput // ItemFunctionCallOutput
	Reasoning ReasoningItem      // ItemReasoning
	// Continues is should_continue_final_message for the item as the
	// last one: a message or reasoning item (or one without a type) in
	// progress or incomplete.
	Continues bool
}

// FunctionCall is a function_call item; Complete is false when call_id,
// name or arguments is absent or null.
type FunctionCall struct {
	CallID, Name, Namespace, Arguments string
	Complete                           bool
}

// FunctionCallOutput is a function_call_output item: output as sent (a
// shared null when absent) and call_id (nil when absent or null).
type FunctionCallOutput struct {
	Output *wire.Node
	CallID *string
}

// ReasoningItem is a reasoning item: the text vLLM takes from it (the first
// content part's, else the first summary part's), whether summary is a
// list, and whether encrypted_content is a non-empty string.
type ReasoningItem struct {
	Text      string
	Summary   bool
	Encrypted bool
}

// itemStringMembers are the members the conversion reads as strings.
var itemStringMembers = []string{"type", "role", "call_id", "name", "namespace", "arguments", "encrypted_content"}

// inputItemOf reads input item n (already validated against the input
// item union).
func inputItemOf(n *wire.Node) InputItem {
	it := InputItem{Kind: ItemMessage, Message: n}
	if n.Kind != wire.Object {
		it.Kind = ItemMalformed
		return it
	}
	str := make(map[string]*string, len(itemStringMembers))
	for _, k := range itemStringMembers {
		v, ok := n.Get(k)
		switch {
		case !ok || v.Kind == wire.Null:
		case v.Kind == wire.String:
			str[k] = &v.S
		default:
			it.Kind = ItemMalformed
		}
	}
	typ := ""
	if t := str["type"]; t != nil {
		typ = *t
	}
	if status, _ := n.Get("status"); status != nil && status.Kind == wire.String &&
		(status.S == "in_progress" || status.S == "incomplete") {
		// A malformed type stops the check too (not a str).
		t, _ := n.Get("type")
		it.Continues = t.IsNull() || typ == "message" || typ == "reasoning"
	}
	if it.Kind == ItemMalformed {
		return it
	}
	switch {
	case typ == "function_call":
		it.Kind = ItemFunctionCall
		it.Call = functionCallOf(str)
	case typ == "reasoning":
		it.Kind = ItemReasoning
		it.Reasoning = reasoningItemOf(n, str["encrypted_content"])
	case typ == "function_call_output":
		out, _ := n.Get("output")
		if out == nil {
			out = wire.NullNode
		}
		it.Kind, it.Output = ItemFunctionCallOutput, FunctionCallOutput{Output: out, CallID: str["call_id"]}
	case str["role"] != nil && *str["role"] == "assistant":
		content, _ := n.Get("content")
		if text, ok := assistantText(content); ok {
			it.Kind, it.Text = ItemAssistantText, text
		}
	}
	return it
}

func functionCallOf(str map[string]*string) FunctionCall {
	id, name, args := str["call_id"], str["name"], str["arguments"]
	if id == nil || name == nil || args == nil {
		return FunctionCall{}
	}
	c := FunctionCall{CallID: *id, Name: *name, Arguments: *args, Complete: true}
	if ns := str["namespace"]; ns != nil {
		c.Namespace = *ns
	}
	return c
}

// reasoningItemOf reads a reasoning item. pydantic lets a summary that is not
// a list through (the TypedDict's Iterable).
func reasoningItemOf(n *wire.Node, encrypted *string) ReasoningItem {
	summary, _ := n.Get("summary")
	content, _ := n.Get("content")
	r := ReasoningItem{Summary: summary != nil && summary.Kind == wire.Array,
		Encrypted: encrypted != nil && *encrypted != ""}
	switch {
	case content != nil && content.Kind == wire.Array && len(content.Arr) >= 1:
		r.Text = partText(content.Arr[0])
	case r.Summary && len(summary.Arr) >= 1:
		r.Text = partText(summary.Arr[0])
	}
	return r
}

// assistantText is the text vLLM takes from an assistant message: a string
// content (null counting as ""), or the first content part's text.
func assistantText(content *wire.Node) (string, bool) {
	switch {
	case content == nil:
		return "", false
	case content.Kind == wire.Null:
		return "", true
	case content.Kind == wire.String:
		return content.S, true
	case content.Kind != wire.Array || len(content.Arr) == 0:
		return "", false
	}
	part := content.Arr[0]
	if part.Kind != wire.Object {
		return "", false
	}
	text, _ := part.Get("text")
	if text == nil || text.Kind != wire.String {
		return "", false
	}
	return text.S, true
}

// partText is a content or summary part's text, "" when it has none.
func partText(part *wire.Node) string {
	text, _ := part.Get("text")
	s, _ := text.Text()
	return s
}
