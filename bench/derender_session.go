package bench

import (
	"fmt"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/parsers"
)

// session streams the output one token per Push through an in-process
// ChatSession, as the orchestrator does for /v1/chat/completions: no
// stream_state round trips, so it shows what one-token streaming costs
// without the protocol's per-call floor. With collect it accumulates the
// answer (to check it against batch); without (the timed runs) it only
// counts the chunks, as the batch measure only takes its response: the
// answer is made in memory on both sides and encoding it is left out of
// both.
func (c *apiClient) session(e *derender.Engine, collect bool) (parsers.Accumulator, error) {
	var acc parsers.Accumulator
	var scratch []parsers.ToolCallDelta
	s, err := e.NewChatSession(c.cr, derender.SessionConfig{Prompt: c.prompt})
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
		seen++
		if collect {
			d := derender.ParserDelta(&step.Delta, scratch)
			acc.Add(d)
			if d.ToolCalls != nil {
				scratch = d.ToolCalls
			}
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
