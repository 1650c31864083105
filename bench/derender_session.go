package bench

import (
	"fmt"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
)

// session streams the output one token per Push through an in-process
// ChatSession, as the orchestrator does for /v1/chat/completions: no
// stream_state round trips, so it shows what one-token streaming costs
// without the protocol's per-call floor.
func (c *apiClient) session(e *derender.Engine) (parsers.Accumulator, error) {
	var acc parsers.Accumulator
	var scratch []parsers.ToolCallDelta
	s, err := e.NewChatSession(c.cr, derender.SessionConfig{Prompt: derenderPrompt})
	if err != nil {
		return acc, fmt.Errorf("bench derender: session: %w", err)
	}
	stop := "stop"
	var one [1]int
	for i, id := range c.ids {
		one[0] = id
		var fin *string
		if i == len(c.ids)-1 {
			fin = &stop
		}
		step := s.Push(one[:], nil, fin)
		if step.Emit {
			scratch = addDelta(&acc, &step.Delta, scratch)
		}
	}
	if !s.Done() {
		return acc, fmt.Errorf("bench derender: session did not finish")
	}
	return acc, nil
}

// addDelta accumulates a wire delta, reusing scratch for its tool calls so
// the client's share of the measured CPU stays small.
func addDelta(acc *parsers.Accumulator, d *protocol.DeltaMessage, scratch []parsers.ToolCallDelta) []parsers.ToolCallDelta {
	var pd parsers.Delta
	if d.Content != nil {
		pd.Content = *d.Content
	}
	if d.Reasoning != nil {
		pd.Reasoning = *d.Reasoning
	}
	scratch = scratch[:0]
	for _, tc := range d.ToolCalls {
		c := parsers.ToolCallDelta{Index: tc.Index}
		if tc.ID != nil {
			c.ID = *tc.ID
		}
		if tc.Function.Name != nil {
			c.Name = *tc.Function.Name
		}
		if tc.Function.Arguments != nil {
			c.Arguments = *tc.Function.Arguments
		}
		scratch = append(scratch, c)
	}
	pd.ToolCalls = scratch
	acc.Add(pd)
	return scratch
}
