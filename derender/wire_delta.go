package derender

import (
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
)

// ParserDelta reads a wire delta back as the parser delta it was made
// from, for clients that accumulate a stream with parsers.Accumulator
// (tests, benchmarks). The tool calls are appended to calls[:0], so a
// caller done with each delta before the next can reuse the slice.
func ParserDelta(d *protocol.DeltaMessage, calls []parsers.ToolCallDelta) parsers.Delta {
	var pd parsers.Delta
	if d.Content != nil {
		pd.Content = *d.Content
	}
	if d.Reasoning != nil {
		pd.Reasoning = *d.Reasoning
	}
	calls = calls[:0]
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
		calls = append(calls, c)
	}
	if len(calls) > 0 {
		pd.ToolCalls = calls
	}
	return pd
}
