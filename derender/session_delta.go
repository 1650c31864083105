package derender

import (
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
)

// deltaBuf backs the pointers of a session step's delta. A session reuses
// it on every Push, so a one-token step allocates nothing for its delta;
// the price is that a step's Delta is valid only until the next Push (the
// orchestrator encodes it at once).
type deltaBuf struct {
	content, reasoning string
	calls              []protocol.ToolCallDelta
	// strs holds each call's id, type, name and arguments, in that order.
	strs []string
}

// fill is Engine.delta into reused storage, for a session whose role
// chunk the caller sends (no role here). It writes m, which must be zero,
// in place: the message is copied often enough on its way out already.
func (b *deltaBuf) fill(e *Engine, parser *parsers.Parser, d *parsers.Delta, state *protocol.DerenderStreamState, m *protocol.DeltaMessage) {
	if d.Content != "" {
		b.content = d.Content
		m.Content = &b.content
	}
	if d.Reasoning != "" {
		b.reasoning = d.Reasoning
		m.Reasoning = &b.reasoning
		if e.cfg.ReasoningFieldCompat {
			m.ReasoningContent = &b.reasoning
		}
	}
	if len(d.ToolCalls) == 0 {
		return
	}
	// Sized up front: the pointers below must not move within this step.
	n := 4 * len(d.ToolCalls)
	if cap(b.strs) < n {
		b.strs = make([]string, n)
	}
	b.strs = b.strs[:n]
	b.calls = b.calls[:0]
	for i, tc := range d.ToolCalls {
		state.ToolsStreamed = true
		s := b.strs[4*i : 4*i+4 : 4*i+4]
		out := protocol.ToolCallDelta{Index: tc.Index}
		if tc.ID != "" || tc.Name != "" {
			if tc.Index < len(state.LastToolCallIDs) {
				s[0] = state.LastToolCallIDs[tc.Index]
			} else {
				s[0] = parser.ToolCallID(tc.ID, newToolCallID)
				state.LastToolCallIDs = append(state.LastToolCallIDs, s[0])
			}
			s[1], s[2] = "function", tc.Name
			out.ID, out.Type, out.Function.Name = &s[0], &s[1], &s[2]
		}
		if tc.Arguments != "" {
			s[3] = tc.Arguments
			out.Function.Arguments = &s[3]
		}
		b.calls = append(b.calls, out)
	}
	m.ToolCalls = b.calls
}
