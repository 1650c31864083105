package parsers

import "github.com/vrender/vrender/internal/statecodec"

// Parsers that leave the output alone: vLLM's IdentityReasoningParser
// (deepseek_v3 with thinking off) returns it all as content, and
// MiniMaxM2AppendThinkReasoningParser (minimax_m2_append_think) returns it
// as content behind a "<think>" the prompt had opened. Reasoning is null,
// content is a string even when empty.

// IdentityReasoning passes everything through as content.
type IdentityReasoning struct {
	// prefix is text still to be put before the first content.
	prefix string
}

// newAppendThink is minimax_m2_append_think's machine.
func newAppendThink(Vocab, *Request, []int) (ReasoningMachine, error) {
	return &IdentityReasoning{prefix: thinkStart}, nil
}

// Push implements ReasoningMachine.
func (m *IdentityReasoning) Push(text string) (reasoning, content string) {
	if m.prefix != "" {
		text, m.prefix = m.prefix+text, ""
	}
	return "", text
}

// Finish implements ReasoningMachine.
func (m *IdentityReasoning) Finish() (reasoning, content string) {
	return m.Push("")
}

// Nulls implements ReasoningMachine.
func (m *IdentityReasoning) Nulls() (reasoningNull, contentNull bool) { return true, false }

// codec saves and restores the state of a IdentityReasoning.
func (m *IdentityReasoning) codec(c *statecodec.Codec) {
	c.String(&m.prefix)
}
