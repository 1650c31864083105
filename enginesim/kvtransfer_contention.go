package enginesim

import (
	"context"
	"sync"
	"time"
)

// prefillGate models the interference that disaggregated serving removes.
// One engine runs one batch at a time: while it computes a prompt's
// prefill, the requests it is decoding get no new token. With
// Config.SerialPrefill a sim's prefills (the first-token latency of a
// request that did not get its KV cache from a prefill engine) run one at
// a time, and every decode step first waits for the running prefill to
// end. This is vLLM's scheduling without chunked prefill; chunked prefill
// softens the stall but does not remove it. Without SerialPrefill (the
// default) latencies are independent sleeps, as if the engine had
// unlimited compute.
type prefillGate struct {
	slot chan struct{} // holds a token while a prefill runs

	mu   sync.Mutex
	idle chan struct{} // closed while no prefill runs
}

func newPrefillGate() *prefillGate {
	idle := make(chan struct{})
	close(idle)
	return &prefillGate{slot: make(chan struct{}, 1), idle: idle}
}

// prefill waits for its turn, then calls started and takes d with
// decodes stalled. It reports an abort (stop closed) or the client leaving
// (ctx done).
func (p *prefillGate) prefill(ctx context.Context, stop <-chan struct{}, d time.Duration, started func()) (aborted, gone bool) {
	select {
	case p.slot <- struct{}{}:
	case <-ctx.Done():
		return false, true
	case <-stop:
		return true, false
	}
	started()
	p.mu.Lock()
	p.idle = make(chan struct{})
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		close(p.idle)
		p.mu.Unlock()
		<-p.slot
	}()
	return sleep(ctx, stop, d)
}

// decodeStep waits until no prefill runs, then takes d.
func (p *prefillGate) decodeStep(ctx context.Context, stop <-chan struct{}, d time.Duration) (aborted, gone bool) {
	p.mu.Lock()
	idle := p.idle
	p.mu.Unlock()
	select {
	case <-idle:
	case <-ctx.Done():
		return false, true
	case <-stop:
		return true, false
	}
	return sleep(ctx, stop, d)
}

// sleep waits d unless ctx ends or stop closes first.
func sleep(ctx context.Context, stop <-chan struct{}, d time.Duration) (aborted, gone bool) {
	if d <= 0 {
		select {
		case <-ctx.Done():
			return false, true
		case <-stop:
			return true, false
		default:
			return false, false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false, true
	case <-stop:
		return true, false
	case <-t.C:
		return false, false
	}
}
