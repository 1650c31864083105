package fleet

import (
	"errors"
	"io"
	"sync"

	"github.com/vrender/vrender/orchestrator/engine"
	"github.com/vrender/vrender/protocol"
)

// Call is one streaming engine request. Recv is not safe for concurrent
// use; Close may be called from another goroutine to interrupt Recv, and
// must be called once the caller is done.
type Call struct {
	stream *engine.Stream
	member *poolMember
	pool   *Pool

	mu       sync.Mutex
	outcome  error // the error that ended the stream (io.EOF when it completed)
	released bool
}

// Engine is the engine that holds the request: aborts go there.
func (c *Call) Engine() *engine.Client { return c.member.client }

// Recv returns the next event, io.EOF after the last (see engine.Stream).
func (c *Call) Recv() (*protocol.GenerateResponse, error) {
	ev, err := c.stream.Recv()
	if err != nil {
		c.mu.Lock()
		if c.outcome == nil {
			c.outcome = err
		}
		c.mu.Unlock()
	}
	return ev, err
}

// Close releases the stream and the engine's outstanding-request slot,
// and tells the pool how the engine did: a completed stream counts as a
// success, an engine failure (5xx, broken stream, timeout) as a failure,
// anything else (the client went away) as neither.
func (c *Call) Close() error {
	err := c.stream.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.released {
		return err
	}
	c.released = true
	c.member.outstanding.Add(-1)
	switch {
	case errors.Is(c.outcome, io.EOF):
		c.pool.report(c.member, nil)
	case c.outcome != nil && engineFault(c.outcome):
		c.pool.report(c.member, c.outcome)
	}
	return err
}
