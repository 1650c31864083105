package protocol

import (
	"encoding/json"
	"fmt"
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
	// Name is the function of a named choice, the value of a
	// ToolChoiceBadString, or for ToolChoiceBad the function name an
	// object carried (possibly "").
	Name string
	raw  json.RawMessage
}

// DecodeToolChoice reads a raw tool_choice as the chat API spells it:
// "none", "auto", "required" or {"function": {"name": ...}}.
func DecodeToolChoice(raw json.RawMessage) ToolChoice {
	if len(raw) == 0 || string(raw) == "null" {
		return ToolChoice{Kind: ToolChoiceUnset, raw: raw}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		switch s {
		case "none":
			return ToolChoice{Kind: ToolChoiceNone, raw: raw}
		case "auto":
			return ToolChoice{Kind: ToolChoiceAuto, raw: raw}
		case "required":
			return ToolChoice{Kind: ToolChoiceRequired, raw: raw}
		}
		return ToolChoice{Kind: ToolChoiceBadString, Name: s, raw: raw}
	}
	var named struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	err := json.Unmarshal(raw, &named)
	if err != nil || named.Function.Name == "" {
		return ToolChoice{Kind: ToolChoiceBad, Name: named.Function.Name, raw: raw}
	}
	return ToolChoice{Kind: ToolChoiceNamed, Name: named.Function.Name, raw: raw}
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
