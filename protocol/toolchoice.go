package protocol

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/vrender/vrender/internal/wire"
)

// ToolChoiceKind is the form of a request's tool_choice. None, Auto,
// Required and Named are the ones vLLM distinguishes once Resolve applied
// its defaults.
type ToolChoiceKind int

// The tool_choice forms.
const (
	// ToolChoiceUnset is an absent or null tool_choice, the zero value: a
	// request built in code without one gets vLLM's default.
	ToolChoiceUnset ToolChoiceKind = iota
	ToolChoiceNone
	ToolChoiceAuto
	ToolChoiceRequired
	ToolChoiceNamed
	// ToolChoiceBadString is a string other than the three literals.
	ToolChoiceBadString
	// ToolChoiceBad is any other form: not a string, or an object without
	// a function name.
	ToolChoiceBad
	// ToolChoiceOther is a Responses tool_choice object other than a named
	// function (allowed_tools, a hosted tool type, mcp, custom): vLLM's
	// parser treats it as "none" (the answer's text is kept, no call is
	// parsed, adjust_request adds no constraint), yet the template still
	// gets the tools, as it does for any choice that is not "none".
	ToolChoiceOther
)

// ToolChoice is a decoded tool_choice, the one reading of the field every
// package uses, so render, the parsers and derender cannot disagree on
// what a request asked for. The zero value is unset.
type ToolChoice struct {
	Kind ToolChoiceKind
	// Name is the function of a named choice or the value of a
	// ToolChoiceBadString.
	Name string
	// bad is the client's text of a ToolChoiceBad or ToolChoiceOther: the
	// error message and AppendJSON quote it.
	bad []byte
}

// decodeToolChoice reads a raw tool_choice as the chat API spells it.
func decodeToolChoice(raw []byte) ToolChoice {
	if len(raw) == 0 {
		return ToolChoice{Kind: ToolChoiceUnset}
	}
	n, err := wire.Parse(raw)
	if err != nil {
		return ToolChoice{Kind: ToolChoiceBad, bad: bytes.Clone(raw)}
	}
	return toolChoiceOf(n)
}

// toolChoiceOf reads a tool_choice as the chat API spells it: "none",
// "auto", "required" or {"function": {"name": ...}}. Keys match exactly,
// as pydantic's do; a repeated key's last value counts, as in the Python
// dict the request becomes. Strings are cloned: the tree aliases the
// request's buffer.
func toolChoiceOf(n *wire.Node) ToolChoice {
	switch n.Kind {
	case wire.Null:
		return ToolChoice{Kind: ToolChoiceUnset}
	case wire.String:
		switch n.S {
		case "none":
			return ToolChoice{Kind: ToolChoiceNone}
		case "auto":
			return ToolChoice{Kind: ToolChoiceAuto}
		case "required":
			return ToolChoice{Kind: ToolChoiceRequired}
		}
		return ToolChoice{Kind: ToolChoiceBadString, Name: strings.Clone(n.S)}
	case wire.Object:
		if fn, ok := n.Get("function"); ok && fn.Kind == wire.Object {
			if name, ok := fn.Get("name"); ok && name.Kind == wire.String && name.S != "" {
				return ToolChoice{Kind: ToolChoiceNamed, Name: strings.Clone(name.S)}
			}
		}
	}
	return ToolChoice{Kind: ToolChoiceBad, bad: bytes.Clone(n.Raw)}
}

// ResponsesToolChoice reads a Responses tool_choice (already validated
// against openai's ToolChoice union) in the chat request's terms: a named
// function ({"type":"function","name":N}, openai's ToolChoiceFunction) is
// a named choice, the other objects ToolChoiceOther; strings are the same
// in both APIs.
func ResponsesToolChoice(n *wire.Node) ToolChoice {
	if n.Kind != wire.Object {
		return toolChoiceOf(n)
	}
	typ, _ := n.Get("type")
	name, _ := n.Get("name")
	if typ != nil && typ.Kind == wire.String && typ.S == "function" && name != nil && name.Kind == wire.String && name.S != "" {
		return ToolChoice{Kind: ToolChoiceNamed, Name: strings.Clone(name.S)}
	}
	return ToolChoice{Kind: ToolChoiceOther, bad: bytes.Clone(n.Raw)}
}

// UnmarshalJSON reads a chat tool_choice, for fixtures and tests that
// build requests with encoding/json; requests are decoded by
// DecodeChatCompletionRequest.
func (c *ToolChoice) UnmarshalJSON(data []byte) error {
	*c = decodeToolChoice(data)
	return nil
}

// AppendJSON appends the choice as the chat API spells it: a string, the
// named-function object, null for an unset choice, and the client's text
// of a bad or Responses-only form.
func (c ToolChoice) AppendJSON(dst []byte) []byte {
	switch c.Kind {
	case ToolChoiceNone, ToolChoiceAuto, ToolChoiceRequired, ToolChoiceBadString:
		return wire.AppendString(dst, c.String())
	case ToolChoiceNamed:
		dst = append(dst, `{"type":"function","function":{"name":`...)
		return append(wire.AppendString(dst, c.Name), "}}"...)
	case ToolChoiceBad, ToolChoiceOther:
		return append(dst, c.bad...)
	}
	return append(dst, "null"...)
}

// Resolve applies vLLM's default to an unset choice: "auto" when tools are
// given, "none" otherwise. A Responses-only object is "none". It refuses
// the invalid forms.
func (c ToolChoice) Resolve(haveTools bool) (ToolChoice, error) {
	switch c.Kind {
	case ToolChoiceUnset:
		if haveTools {
			return ToolChoice{Kind: ToolChoiceAuto}, nil
		}
		return ToolChoice{Kind: ToolChoiceNone}, nil
	case ToolChoiceOther:
		return ToolChoice{Kind: ToolChoiceNone}, nil
	case ToolChoiceBadString:
		return c, fmt.Errorf("invalid tool_choice %q", c.Name)
	case ToolChoiceBad:
		return c, fmt.Errorf("invalid tool_choice %s", c.bad)
	}
	return c, nil
}

// String is the value of a string form ("none", "auto", "required" or an
// invalid string), or "" for an unset, named or object choice.
func (c ToolChoice) String() string {
	switch c.Kind {
	case ToolChoiceNone:
		return "none"
	case ToolChoiceAuto:
		return "auto"
	case ToolChoiceRequired:
		return "required"
	case ToolChoiceBadString:
		return c.Name
	}
	return ""
}
