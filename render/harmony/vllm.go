package harmony

import "fmt"

// This file is vLLM's layer over openai_harmony (vllm/entrypoints/openai/
// parser/harmony_utils.py at bf578e1): the preamble it builds, how it turns
// chat messages into Harmony messages, and its analysis-dropping rule.

// ChatMessage is the part of an OpenAI chat message vLLM's Harmony path reads.
// Parts holds the text of each content part when the content is a list;
// Content is nil when the message had no (or null) content.
type ChatMessage struct {
	Role    string
	Content *string
	Parts   []string
	// First is the text of the first part ("" when it has none): vLLM keeps
	// an assistant message only when that is non-empty.
	First      string
	IsList     bool
	Reasoning  string
	ToolCalls  []ToolCall
	ToolCallID string
}

// ToolCall is an assistant tool call as the client sent it back.
type ToolCall struct {
	ID, Name, Arguments string
}

// Options are the request and server settings the preamble depends on.
type Options struct {
	ReasoningEffort string // "" keeps Harmony's default (medium)
	StartDate       string // VLLM_SYSTEM_START_DATE or today, YYYY-MM-DD
	// SystemInstructions is VLLM_GPT_OSS_HARMONY_SYSTEM_INSTRUCTIONS: system
	// and developer instructions go into the system message's identity.
	SystemInstructions bool
}

var reasoningEfforts = map[string]bool{"low": true, "medium": true, "high": true}

// systemMessage is get_system_message.
func systemMessage(instructions *string, o Options) (Message, error) {
	s := DefaultSystem()
	if instructions != nil && o.SystemInstructions {
		if s.ModelIdentity != "" {
			s.ModelIdentity += "\n" + *instructions
		} else {
			s.ModelIdentity = *instructions
		}
	}
	if o.ReasoningEffort != "" {
		if !reasoningEfforts[o.ReasoningEffort] {
			//lint:ignore ST1005 vLLM's message, byte for byte
			return Message{}, fmt.Errorf("reasoning_effort='%s' is not supported by Harmony. Supported values are: high, medium, low.", o.ReasoningEffort)
		}
		s.ReasoningEffort = o.ReasoningEffort
	}
	s.StartDate = o.StartDate
	return Message{Role: "system", System: &s}, nil
}

// developerMessage is get_developer_message.
func developerMessage(instructions *string, tools []Tool, o Options) Message {
	d := &Developer{Tools: tools}
	if instructions != nil && !o.SystemInstructions {
		d.Instructions, d.HasInstr = *instructions, true
	}
	return Message{Role: "developer", Developer: d}
}

// Build is vLLM's _make_request_with_harmony up to the prompt: it peels a
// leading system/developer message into instructions, builds the preamble,
// converts the rest and applies vLLM's analysis-dropping rule. tools is nil
// when the request offers none (or they are excluded).
func Build(chat []ChatMessage, tools []Tool, o Options) ([]Message, error) {
	if o.ReasoningEffort == "none" {
		//lint:ignore ST1005 vLLM's message, byte for byte
		return nil, fmt.Errorf("Harmony does not support reasoning_effort='none'")
	}
	var instructions *string
	if len(chat) > 0 && (chat[0].Role == "system" || chat[0].Role == "developer") {
		instructions = flatten(chat[0])
		chat = chat[1:]
	}
	var devInstr, sysInstr *string
	if o.SystemInstructions {
		sysInstr = instructions
	} else {
		devInstr = instructions
	}
	sys, err := systemMessage(sysInstr, o)
	if err != nil {
		return nil, err
	}
	msgs := []Message{sys}
	if (devInstr != nil && *devInstr != "") || len(tools) > 0 {
		msgs = append(msgs, developerMessage(devInstr, tools, o))
	}
	names := map[string]string{}
	for _, m := range chat {
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Name
		}
	}
	for _, m := range chat {
		conv, err := fromChat(m, names, o)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, conv...)
	}
	return AutoDropAnalysis(msgs), nil
}

// flatten is flatten_input_text_content: nil when there is no text at all.
func flatten(m ChatMessage) *string {
	if !m.IsList {
		return m.Content
	}
	if len(m.Parts) == 0 {
		return nil
	}
	var s string
	for _, p := range m.Parts {
		s += p
	}
	return &s
}

// fromChat is parse_chat_input_to_harmony_message.
func fromChat(m ChatMessage, names map[string]string, o Options) ([]Message, error) {
	var out []Message
	if m.Role == "assistant" && len(m.ToolCalls) > 0 {
		if c := flatten(m); c != nil && *c != "" {
			out = append(out, Message{Role: "assistant", Channel: "commentary", Text: *c})
		}
		if m.Reasoning != "" {
			out = append(out, Message{Role: "assistant", Channel: "analysis", Text: m.Reasoning})
		}
		for _, c := range m.ToolCalls {
			out = append(out, Message{Role: "assistant", Channel: "commentary",
				Recipient: "functions." + c.Name, ContentType: "json", Text: c.Arguments})
		}
		return out, nil
	}
	if m.Role == "tool" {
		text := ""
		if c := flatten(m); c != nil {
			text = *c
		}
		return []Message{{Role: "tool", Name: "functions." + names[m.ToolCallID],
			Channel: "commentary", Recipient: "assistant", Text: text}}, nil
	}
	if m.Role == "assistant" && m.Reasoning != "" {
		out = append(out, Message{Role: "assistant", Channel: "analysis", Text: m.Reasoning})
	}
	var first, all string
	if m.IsList {
		first = m.First
		for _, p := range m.Parts {
			all += p
		}
	} else if m.Content != nil {
		first, all = *m.Content, *m.Content
	}
	switch {
	case m.Role == "assistant":
		if first != "" {
			out = append(out, Message{Role: "assistant", Channel: "final", Text: all})
		}
	case m.Role == "system" || m.Role == "developer":
		if instr := flatten(m); instr != nil {
			if m.Role == "system" && o.SystemInstructions {
				sys, err := systemMessage(instr, Options{StartDate: o.StartDate, SystemInstructions: true})
				if err != nil {
					return nil, err
				}
				out = append(out, sys)
			} else {
				out = append(out, developerMessage(instr, nil, o))
			}
		}
	default:
		out = append(out, Message{Role: m.Role, Text: all})
	}
	return out, nil
}

// AutoDropAnalysis is vLLM's auto_drop_analysis_messages: every analysis
// message before the last assistant final message goes. (openai_harmony's own
// rule drops only those before the first final, and only when the last
// assistant message is final; vLLM renders with that rule off.)
func AutoDropAnalysis(msgs []Message) []Message {
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "assistant" && msgs[i].Channel == "final" {
			last = i
			break
		}
	}
	out := make([]Message, 0, len(msgs))
	for i, m := range msgs {
		if i < last && m.Channel == "analysis" {
			continue
		}
		out = append(out, m)
	}
	return out
}
