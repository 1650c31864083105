package parsers

import "github.com/vrender/vrender/internal/statecodec"

// Parsers that leave the output alone: vLLM's IdentityReasoningParser
// (deepseek_v3 with thinking off) returns it all as content, and
// MiniMaxM2AppendThinkReasoningParser (minimax_m2_append_think) returns it
// as content behind a "<think>" the prompt had opened. Reasoning is null,
// content is a string even when empty.

// identityReasoning passes everything through as content.
type identityReasoning struct {
	// prefix is text still to be put before the first content.
	prefix string
}

// newAppendThink is minimax_m2_append_think's machine.
func newAppendThink(Vocab, *Request, []int) (reasoningMachine, error) {
	return &identityReasoning{prefix: thinkStart}, nil
}

// Push implements reasoningMachine.
func (m *identityReasoning) Push(text string) (reasoning, content string) {
	if m.prefix != "" {
		text, m.prefix = m.prefix+text, ""
	}
	return "", text
}

// Finish implements reasoningMachine.
func (m *identityReasoning) Finish() (reasoning, content string) {
	return m.Push("")
}

// Nulls implements reasoningMachine.
func (m *identityReasoning) Nulls() (reasoningNull, contentNull bool) { return true, false }

// codec saves and restores the state of a identityReasoning.
func (m *identityReasoning) codec(c *statecodec.Codec) {
	c.String(&m.prefix)
}
