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
// without the protocol's per-call floor. With collect it accumulates the
// answer (to check it against batch); without, it only reads each delta
// as an encoder would (the timed runs: accumulating is the client's work,
// not derender's, and batch's measure has no client either).
func (c *apiClient) session(e *derender.Engine, collect bool) (parsers.Accumulator, error) {
	var acc parsers.Accumulator
	var scratch []parsers.ToolCallDelta
	s, err := e.NewChatSession(c.cr, derender.SessionConfig{Prompt: derenderPrompt})
	if err != nil {
		return acc, fmt.Errorf("bench derender: session: %w", err)
	}
	stop := "stop"
	var one [1]int
	seen := 0
	for i, id := range c.ids {
		one[0] = id
		var fin *string
		if i == len(c.ids)-1 {
			fin = &stop
		}
		step := s.Push(one[:], nil, fin)
		if !step.Emit {
			continue
		}
		if collect {
			d := derender.ParserDelta(&step.Delta, scratch)
			acc.Add(d)
			if d.ToolCalls != nil {
				scratch = d.ToolCalls
			}
		} else {
			seen += deltaLen(&step.Delta)
		}
	}
	if !s.Done() {
		return acc, fmt.Errorf("bench derender: session did not finish")
	}
	if !collect && seen == 0 {
		return acc, fmt.Errorf("bench derender: session emitted nothing")
	}
	return acc, nil
}

// deltaLen is the text a delta carries, in bytes: reading each field once.
func deltaLen(d *protocol.DeltaMessage) int {
	n := 0
	if d.Content != nil {
		n += len(*d.Content)
	}
	if d.Reasoning != nil {
		n += len(*d.Reasoning)
	}
	for i := range d.ToolCalls {
		if a := d.ToolCalls[i].Function.Arguments; a != nil {
			n += len(*a)
		}
	}
	return n
}
