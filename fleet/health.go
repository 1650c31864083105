package fleet

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/vrender/vrender/orchestrator/engine"
)

// healthPath is the engine's liveness route (vLLM's GET /health: 200 when
// the engine core is alive).
const healthPath = "/health"

// EngineHealth is one engine's state as its pool sees it: what metrics
// export and what an operator reads to see why requests fail.
type EngineHealth struct {
	URL  string
	Role string // RoleCollocated, RolePrefill or RoleDecode
	// Healthy is false while the engine is ejected.
	Healthy bool
	// Outstanding is the number of requests the engine holds now.
	Outstanding int64
	// ConsecutiveFailures counts failed requests and health checks since
	// the last success.
	ConsecutiveFailures int
	// Ejections is how many times the engine was ejected.
	Ejections int64
	// LastError is the latest failure ("" when none yet).
	LastError string
	// LastCheck is when the latest active health check finished (zero
	// before the first).
	LastCheck time.Time
	// FailOpen counts the ejections the engine's pool declined because the
	// engine was its last admitted one (the same figure on every engine of
	// a pool).
	FailOpen int64
	// QueueKnown is true when the latest scrape of the engine's /metrics
	// (PoolConfig.Queue) succeeded; QueueWaiting and QueueRunning are then
	// its vllm:num_requests_waiting and vllm:num_requests_running.
	QueueKnown                 bool
	QueueWaiting, QueueRunning int64
	// Items counts the multimodal items sent to the engine as null
	// kwargs, for its cache to fill, and the requests resent with the data
	// because it lacked one (serve --engine-mm-cache-gb).
	Items engine.ItemStats
}

// Health returns a snapshot of the pool's engines, in configuration order.
func (p *Pool) Health() []EngineHealth {
	out := make([]EngineHealth, 0, len(p.members))
	for _, m := range p.members {
		m.mu.Lock()
		out = append(out, EngineHealth{URL: m.client.URL(), Role: p.role, Healthy: !m.ejected,
			Outstanding: m.outstanding.Load(), ConsecutiveFailures: m.failures, Ejections: m.ejections,
			LastError: m.lastError, LastCheck: m.lastCheck, FailOpen: p.failOpen.Load(),
			QueueKnown: m.queue.known.Load(), QueueWaiting: m.queue.waiting.Load(), QueueRunning: m.queue.running.Load(),
			Items: m.client.ItemStats()})
		m.mu.Unlock()
	}
	return out
}

// Run checks every engine's /health at once, then every Interval, until
// ctx is done. A passing check re-admits an ejected engine; a failing one
// counts toward ejection. It also runs the queue scrapes (PoolConfig.Queue).
// With neither active checks (negative Interval) nor scrapes it returns at
// once.
func (p *Pool) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { p.runQueueScrapes(ctx) })
	p.runHealth(ctx)
	wg.Wait()
}

func (p *Pool) runHealth(ctx context.Context) {
	if p.health.Interval >= 0 {
		every(ctx, p.health.Interval, p.checkNow)
	}
}

// every runs f at once, then every d, until ctx is done.
func every(ctx context.Context, d time.Duration, f func(context.Context)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		f(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// checkNow runs one round of health checks on every engine, concurrently,
// and returns when all are done. An ejected engine is probed only when its
// backoff has passed.
func (p *Pool) checkNow(ctx context.Context) {
	var wg sync.WaitGroup
	now := p.now()
	for _, m := range p.members {
		if !m.probeDue(now) {
			continue
		}
		wg.Go(func() {
			err := p.check(ctx, m)
			if ctx.Err() != nil {
				return // shutting down: the result says nothing of the engine
			}
			p.checked(m, err)
		})
	}
	wg.Wait()
}

// check is one GET /health.
func (p *Pool) check(ctx context.Context, m *poolMember) error {
	cctx, cancel := context.WithTimeout(ctx, p.health.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, m.client.URL()+healthPath, nil)
	if err != nil {
		return fmt.Errorf("health check: %w", err)
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return fmt.Errorf("health check of %s: %w", m.client.URL(), err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health check of %s: status %d", m.client.URL(), resp.StatusCode)
	}
	return nil
}

// probeDue reports whether m is admitted (checked every round) or an
// ejected engine whose next recovery probe is due.
func (m *poolMember) probeDue(now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !m.ejected || !now.Before(m.nextProbe)
}

// checked records a health check's result.
func (p *Pool) checked(m *poolMember, err error) {
	m.mu.Lock()
	m.lastCheck = p.now()
	readmitted := err == nil && m.ejected
	if err == nil {
		m.failures = 0
		m.ejected = false
	} else if m.ejected {
		// A failed recovery probe: back off, and count nothing more.
		m.probeDelay = min(2*m.probeDelay, maxProbeBackoff*p.health.Interval)
		m.nextProbe = m.lastCheck.Add(m.probeDelay)
		m.lastError = errorDetail(err)
		m.mu.Unlock()
		return
	}
	m.mu.Unlock()
	if readmitted {
		p.log.Info("engine re-admitted after a passing health check", "pool", p.role, "engine", m.client.URL())
	}
	if err != nil {
		p.report(m, err)
	}
}
