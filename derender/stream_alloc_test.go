package derender

import (
	"context"
	"fmt"
	"testing"

	"github.com/vrender/vrender/protocol"
)

// callStepper makes one-token ChatStream calls as a vLLM client does,
// reusing its own request so that what is measured is the engine's work.
type callStepper struct {
	tb    testing.TB
	e     *Engine
	ids   []int
	next  int
	echo  echoKind
	req   protocol.DerenderChatStreamRequest
	state protocol.DerenderStreamState
	res   *protocol.DerenderChatStreamResponse
}

func newCallStepper(tb testing.TB, e *Engine, cr *protocol.ChatCompletionRequest, ids []int, echo echoKind) *callStepper {
	c := &callStepper{tb: tb, e: e, ids: ids, echo: echo}
	c.req = protocol.DerenderChatStreamRequest{ChatRequest: cr, PromptTokenIDs: benchPrompt,
		GenerateChunk: protocol.GenerateResponse{RequestID: "r", Choices: make([]protocol.GenerateChoice, 1)}}
	return c
}

// step derenders the next token, echoing the state as c.echo says.
func (c *callStepper) step() {
	i := c.next
	c.next++
	ch := &c.req.GenerateChunk.Choices[0]
	ch.TokenIDs = c.ids[i : i+1]
	ch.FinishReason = nil
	if i == len(c.ids)-1 {
		ch.FinishReason = new("stop")
	}
	res, err := c.e.ChatStream(context.Background(), &c.req, "m")
	if err != nil {
		c.tb.Fatalf("call %d: %v", i, err)
	}
	c.res = res
	switch c.echo {
	case echoAll:
		c.req.StreamState = &res.StreamState
	case echoHistory:
		c.req.StreamState = &res.StreamState
		c.req.StreamState.VrenderCheckpoint = ""
	case echoCheckpoint:
		c.state = protocol.DerenderStreamState{VrenderCheckpoint: res.StreamState.VrenderCheckpoint}
		c.req.StreamState = &c.state
		c.req.PromptTokenIDs = nil
	}
}

// callAllocs is the mean allocations of one one-token call over n calls
// starting at token from, the stream warmed up to there.
func callAllocs(tb testing.TB, c *callStepper, from, n int) float64 {
	for c.next < from {
		c.step()
	}
	return testing.AllocsPerRun(n, c.step)
}

// maxCallAllocs bounds the allocations of one one-token streaming call with
// the live state cached, reseals (every maxCheckpointTail calls) included.
// It is the level reached plus a margin; a rise above it is a regression
// of the per-call path (the response, its delta, the checkpoint string and
// the cache bookkeeping each used to allocate on every call).
const maxCallAllocs = 4

func TestStreamCallAllocs(t *testing.T) {
	e, cr := benchEngine(t, 64)
	ids := benchOutput(t, e.model, 1000)
	for _, tc := range []struct {
		name string
		echo echoKind
	}{{"echo", echoAll}, {"checkpoint", echoCheckpoint}} {
		c := newCallStepper(t, e, cr, ids, tc.echo)
		// Reasoning, then (past the middle) the tool call's argument.
		reasoning := callAllocs(t, c, 100, 3*maxCheckpointTail)
		args := callAllocs(t, c, len(ids)*3/4, 3*maxCheckpointTail)
		t.Logf("%s: %.2f allocs/call in reasoning, %.2f in a tool call argument", tc.name, reasoning, args)
		if reasoning > maxCallAllocs || args > maxCallAllocs {
			t.Errorf("%s: %.2f allocs/call in reasoning, %.2f in a tool call argument; want at most %d",
				tc.name, reasoning, args, maxCallAllocs)
		}
	}
}

// BenchmarkChatStreamCall is the per-call cost of one-token streaming with
// the live state cached, the client echoing the state as returned (echo)
// or only its checkpoint (checkpoint).
func BenchmarkChatStreamCall(b *testing.B) {
	for _, n := range []int{1 << 10, 16 << 10} {
		for _, tc := range []struct {
			name string
			echo echoKind
		}{{"echo", echoAll}, {"checkpoint", echoCheckpoint}} {
			b.Run(fmt.Sprintf("%s/%dk", tc.name, n>>10), func(b *testing.B) {
				e, cr := benchEngine(b, 64)
				ids := benchOutput(b, e.model, n)
				b.ReportAllocs()
				calls := 0
				for b.Loop() {
					c := newCallStepper(b, e, cr, ids, tc.echo)
					for c.next < len(ids) {
						c.step()
					}
					calls += len(ids)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(calls), "ns/call")
			})
		}
	}
}
