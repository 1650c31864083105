package orchestrator

import (
	"errors"
	"sync/atomic"

	"github.com/vrender/vrender/orchestrator/engine"
)

// Picker chooses the engine a request goes to. Issue 7's pools
// (collocated, prefill/decode) implement it too.
type Picker interface {
	Pick() *engine.Client
}

// RoundRobin spreads requests over a fixed list of engines in turn.
type RoundRobin struct {
	engines []*engine.Client
	next    atomic.Uint64
}

// NewRoundRobin returns a picker over engines (at least one).
func NewRoundRobin(engines ...*engine.Client) (*RoundRobin, error) {
	if len(engines) == 0 {
		return nil, errors.New("orchestrator: at least one engine is required")
	}
	return &RoundRobin{engines: engines}, nil
}

// Pick returns the next engine.
func (r *RoundRobin) Pick() *engine.Client {
	n := r.next.Add(1) - 1
	return r.engines[n%uint64(len(r.engines))]
}
