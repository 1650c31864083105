package protocol

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vrender/vrender/internal/wire"
)

// ToolChoiceKind is the form of a request's tool_choice. The first four
// values are the ones vLLM distinguishes; their numbering is part of the
// parser checkpoint state and must not change.
type ToolChoiceKind int

// The tool_choice forms.
const (
	ToolChoiceNone ToolChoiceKind = iota
	ToolChoiceAuto
	ToolChoiceRequired
	ToolChoiceNamed
	// ToolChoiceUnset is an absent or null tool_choice.
	ToolChoiceUnset
	// ToolChoiceBadString is a string other than the three literals.
	ToolChoiceBadString
	// ToolChoiceBad is any other form: not a string, or an object without
	// a function name.
	ToolChoiceBad
)

// ToolChoice is a decoded tool_choice. It is the one reading of the raw
// field every package uses, so render, the parsers and derender cannot
// disagree on what a request asked for.
type ToolChoice struct {
	Kind ToolChoiceKind
	// Name is the function of a named choice or the value of a
	// ToolChoiceBadString.
	Name string
	raw  json.RawMessage
}

// DecodeToolChoice reads a raw tool_choice as the chat API spells it:
// "none", "auto", "required" or {"function": {"name": ...}}. Keys match
// exactly, as pydantic's do; a repeated key's last value counts, as in
// the Python dict the request becomes.
func DecodeToolChoice(raw json.RawMessage) ToolChoice {
	if len(raw) == 0 || string(raw) == "null" {
		return ToolChoice{Kind: ToolChoiceUnset, raw: raw}
	}
	n, err := wire.Parse(raw)
	if err != nil {
		return ToolChoice{Kind: ToolChoiceBad, raw: raw}
	}
	switch n.Kind {
	case wire.Null:
		// null with space around it is still None.
		return ToolChoice{Kind: ToolChoiceUnset, raw: raw}
	case wire.String:
		switch n.S {
		case "none":
			return ToolChoice{Kind: ToolChoiceNone, raw: raw}
		case "auto":
			return ToolChoice{Kind: ToolChoiceAuto, raw: raw}
		case "required":
			return ToolChoice{Kind: ToolChoiceRequired, raw: raw}
		}
		// Clone: the tree aliases the request's buffer.
		return ToolChoice{Kind: ToolChoiceBadString, Name: strings.Clone(n.S), raw: raw}
	case wire.Object:
		if fn, ok := n.Get("function"); ok && fn.Kind == wire.Object {
			if name, ok := fn.Get("name"); ok && name.Kind == wire.String && name.S != "" {
				return ToolChoice{Kind: ToolChoiceNamed, Name: strings.Clone(name.S), raw: raw}
			}
		}
	}
	return ToolChoice{Kind: ToolChoiceBad, raw: raw}
}

// Resolve applies vLLM's default to an unset choice: "auto" when tools are
// given, "none" otherwise. It refuses the invalid forms.
func (c ToolChoice) Resolve(haveTools bool) (ToolChoice, error) {
	switch c.Kind {
	case ToolChoiceUnset:
		if haveTools {
			return ToolChoice{Kind: ToolChoiceAuto}, nil
		}
		return ToolChoice{Kind: ToolChoiceNone}, nil
	case ToolChoiceBadString:
		return c, fmt.Errorf("invalid tool_choice %q", c.Name)
	case ToolChoiceBad:
		return c, fmt.Errorf("invalid tool_choice %s", c.raw)
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
