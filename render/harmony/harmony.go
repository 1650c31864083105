// Package harmony renders conversations in OpenAI's Harmony format, as
// openai_harmony (github.com/openai/harmony, src/encoding.rs) renders them for
// gpt-oss. It produces prompt text; vLLM's message building on top of it is the
// caller's job.
package harmony

import (
	"fmt"
	"strings"
)

// Tool is one function tool: name, description, and its JSON-schema
// parameters as raw JSON (nil when the tool takes none).
type Tool struct {
	Name        string
	Description string
	Parameters  []byte
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

// RenderForCompletion renders msgs followed by the start of an assistant turn,
// as render_conversation_for_completion with auto_drop_analysis off (vLLM
// drops analysis messages itself beforehand).
func RenderForCompletion(msgs []Message) (string, error) {
	hasFunctionTools := false
	for _, m := range msgs {
		if m.Developer != nil && len(m.Developer.Tools) > 0 {
			hasFunctionTools = true
		}
	}
	var b strings.Builder
	for _, m := range msgs {
		if err := renderMessage(&b, m, hasFunctionTools); err != nil {
			return "", err
		}
	}
	b.WriteString("<|start|>assistant")
	return b.String(), nil
}

func renderMessage(b *strings.Builder, m Message, hasFunctionTools bool) error {
	b.WriteString("<|start|>")
	if m.Role == "tool" {
		if m.Name == "" {
			return fmt.Errorf("harmony: tool message without a name")
		}
		b.WriteString(m.Name)
	} else {
		b.WriteString(m.Role)
		if m.Name != "" {
			b.WriteString(":" + m.Name)
		}
	}
	if m.Recipient != "" && m.Recipient != "all" {
		b.WriteString(" to=" + m.Recipient)
	}
	if m.Channel != "" {
		b.WriteString("<|channel|>" + m.Channel)
	}
	if m.ContentType != "" {
		b.WriteString(" " + m.ContentType)
	}
	b.WriteString("<|message|>")
	switch {
	case m.System != nil:
		if m.Role != "system" {
			return fmt.Errorf("harmony: system content in a %s message", m.Role)
		}
		s, err := renderSystem(*m.System, hasFunctionTools)
		if err != nil {
			return err
		}
		b.WriteString(s)
	case m.Developer != nil:
		if m.Role != "developer" {
			return fmt.Errorf("harmony: developer content in a %s message", m.Role)
		}
		s, err := renderDeveloper(*m.Developer)
		if err != nil {
			return err
		}
		b.WriteString(s)
	default:
		b.WriteString(m.Text)
	}
	if m.Role == "assistant" && m.Recipient != "" {
		b.WriteString("<|call|>")
	} else {
		b.WriteString("<|end|>")
	}
	return nil
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
		params, err := parseValue(t.Parameters)
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
