// Package harmony renders conversations in OpenAI's Harmony format, as
// openai_harmony (github.com/openai/harmony, src/encoding.rs) renders them for
// gpt-oss. It produces prompt text; vLLM's message building on top of it is the
// caller's job.
package harmony

import (
	"fmt"
	"strings"

	"github.com/vrender/vrender/internal/wire"
)

// Tool is one function tool: name, description, and its JSON-schema
// parameters as the request's tree (nil when the tool takes none).
type Tool struct {
	Name        string
	Description string
	Parameters  *wire.Node
}

// System is Harmony's SystemContent. Empty strings are absent fields.
type System struct {
	ModelIdentity   string
	KnowledgeCutoff string
	StartDate       string
	ReasoningEffort string // low, medium, high
	ValidChannels   []string
	ChannelRequired bool
}

// DefaultSystem is SystemContent.new() in openai_harmony.
func DefaultSystem() System {
	return System{
		ModelIdentity:   "You are ChatGPT, a large language model trained by OpenAI.",
		KnowledgeCutoff: "2024-06",
		ReasoningEffort: "medium",
		ValidChannels:   []string{"analysis", "commentary", "final"},
		ChannelRequired: true,
	}
}

// Message is one Harmony message. Exactly one of System, Developer or Text
// carries its content.
type Message struct {
	Role        string // system, developer, user, assistant, tool
	Name        string // author name; for tool messages the tool's name
	Recipient   string
	Channel     string
	ContentType string
	System      *System
	Developer   *Developer
	Text        string
}

// Developer is Harmony's DeveloperContent.
type Developer struct {
	Instructions string
	HasInstr     bool
	Tools        []Tool
}

// Piece is one unit of a rendering as openai_harmony emits it: a formatting
// token (Special), or text it encodes on its own with encode_ordinary, so
// special-token strings inside text stay ordinary tokens.
type Piece struct {
	Text    string
	Special bool
}

// RenderForCompletion renders msgs followed by the start of an assistant turn,
// as render_conversation_for_completion with auto_drop_analysis off (vLLM
// drops analysis messages itself beforehand).
func RenderForCompletion(msgs []Message) (string, error) {
	pieces, err := RenderPieces(msgs)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, p := range pieces {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// RenderPieces is RenderForCompletion split as openai_harmony tokenizes it.
func RenderPieces(msgs []Message) ([]Piece, error) {
	hasFunctionTools := false
	for _, m := range msgs {
		if m.Developer != nil && len(m.Developer.Tools) > 0 {
			hasFunctionTools = true
		}
	}
	var out []Piece
	for _, m := range msgs {
		var err error
		if out, err = renderMessage(out, m, hasFunctionTools); err != nil {
			return nil, err
		}
	}
	return append(out, special("<|start|>"), text("assistant")), nil
}

func special(s string) Piece { return Piece{Text: s, Special: true} }
func text(s string) Piece    { return Piece{Text: s} }

func renderMessage(out []Piece, m Message, hasFunctionTools bool) ([]Piece, error) {
	out = append(out, special("<|start|>"))
	if m.Role == "tool" {
		if m.Name == "" {
			return nil, fmt.Errorf("harmony: tool message without a name")
		}
		out = append(out, text(m.Name))
	} else {
		out = append(out, text(m.Role))
		if m.Name != "" {
			out = append(out, text(":"+m.Name))
		}
	}
	if m.Recipient != "" && m.Recipient != "all" {
		out = append(out, text(" to="+m.Recipient))
	}
	if m.Channel != "" {
		out = append(out, special("<|channel|>"), text(m.Channel))
	}
	if m.ContentType != "" {
		if rest, ok := strings.CutPrefix(m.ContentType, "<|constrain|>"); ok {
			out = append(out, text(" "), special("<|constrain|>"))
			if rest != "" {
				out = append(out, text(rest))
			}
		} else {
			out = append(out, text(" "+m.ContentType))
		}
	}
	out = append(out, special("<|message|>"))
	switch {
	case m.System != nil:
		if m.Role != "system" {
			return nil, fmt.Errorf("harmony: system content in a %s message", m.Role)
		}
		s, err := renderSystem(*m.System, hasFunctionTools)
		if err != nil {
			return nil, err
		}
		out = append(out, text(s))
	case m.Developer != nil:
		if m.Role != "developer" {
			return nil, fmt.Errorf("harmony: developer content in a %s message", m.Role)
		}
		s, err := renderDeveloper(*m.Developer)
		if err != nil {
			return nil, err
		}
		out = append(out, text(s))
	default:
		out = append(out, text(m.Text))
	}
	if m.Role == "assistant" && m.Recipient != "" {
		out = append(out, special("<|call|>"))
	} else {
		out = append(out, special("<|end|>"))
	}
	return out, nil
}

func renderSystem(s System, hasFunctionTools bool) (string, error) {
	var sections, top []string
	if s.ModelIdentity != "" {
		top = append(top, s.ModelIdentity)
	}
	if s.KnowledgeCutoff != "" {
		top = append(top, "Knowledge cutoff: "+s.KnowledgeCutoff)
	}
	if s.StartDate != "" {
		top = append(top, "Current date: "+s.StartDate)
	}
	if len(top) > 0 {
		sections = append(sections, strings.Join(top, "\n"))
	}
	if s.ReasoningEffort != "" {
		sections = append(sections, "Reasoning: "+s.ReasoningEffort)
	}
	if len(s.ValidChannels) > 0 {
		h := "# Valid channels: " + strings.Join(s.ValidChannels, ", ") + "."
		if s.ChannelRequired {
			h += " Channel must be included for every message."
		}
		if hasFunctionTools {
			h += "\nCalls to these tools must go to the commentary channel: 'functions'."
		}
		sections = append(sections, h)
	}
	return strings.Join(sections, "\n\n"), nil
}

func renderDeveloper(d Developer) (string, error) {
	var sections []string
	if d.HasInstr {
		sections = append(sections, "# Instructions", d.Instructions)
	}
	if len(d.Tools) > 0 {
		ns, err := FunctionsNamespace(d.Tools)
		if err != nil {
			return "", err
		}
		sections = append(sections, ns)
	}
	return strings.Join(sections, "\n\n"), nil
}

// FunctionsNamespace is the "# Tools" section openai_harmony writes for the
// functions namespace (template_tools_section).
func FunctionsNamespace(tools []Tool) (string, error) {
	lines := []string{"## functions\n", "namespace functions {\n"}
	for _, t := range tools {
		for _, l := range splitLines(t.Description) {
			lines = append(lines, "// "+l)
		}
		if t.Parameters == nil {
			lines = append(lines, "type "+t.Name+" = () => any;\n")
			continue
		}
		params, err := schemaValue(t.Parameters)
		if err != nil {
			return "", fmt.Errorf("tool %q: %w", t.Name, err)
		}
		lines = append(lines, "type "+t.Name+" = (_: "+toTypeScript(params, "")+") => any;\n")
	}
	lines = append(lines, "} // namespace functions")
	return "# Tools\n\n" + strings.Join(lines, "\n"), nil
}

// splitLines is Rust's str::lines: split on \n, drop one trailing empty line,
// strip a \r before each \n.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	parts := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, p := range parts {
		parts[i] = strings.TrimSuffix(p, "\r")
	}
	return parts
}
