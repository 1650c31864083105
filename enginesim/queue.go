package enginesim

import "sync/atomic"

// schedulerQueue is what vLLM's scheduler gauges count: requests waiting
// for their first step (with Config.SerialPrefill, for their turn to
// prefill) and requests scheduled (prefilling or decoding). /metrics
// exports them as vllm:num_requests_waiting and vllm:num_requests_running,
// so a router that reads an engine's queue can be tested against the sim.
type schedulerQueue struct {
	waiting, running atomic.Int64
}

// enqueue counts g as waiting.
func (g *generation) enqueue(q *schedulerQueue) {
	g.queue = q
	q.waiting.Add(1)
}

// schedule moves g from waiting to running, once.
func (g *generation) schedule() {
	if g.queue == nil || g.scheduled {
		return
	}
	g.scheduled = true
	g.queue.waiting.Add(-1)
	g.queue.running.Add(1)
}

// dequeue uncounts g, wherever it was.
func (g *generation) dequeue() {
	if g.queue == nil {
		return
	}
	if g.scheduled {
		g.queue.running.Add(-1)
	} else {
		g.queue.waiting.Add(-1)
	}
	g.queue = nil
}
