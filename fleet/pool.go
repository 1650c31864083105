package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vrender/vrender/kvindex"
	"github.com/vrender/vrender/orchestrator/engine"
	"github.com/vrender/vrender/protocol"
)

// Pool roles: what the engines of a pool do. They name the pool in
// errors, logs and EngineHealth.
const (
	RoleCollocated = "collocated" // prefill and decode on the same engine
	RolePrefill    = "prefill"    // kv_producer engines of a P/D pool
	RoleDecode     = "decode"     // kv_consumer engines of a P/D pool
)

// Health check defaults.
const (
	defaultHealthInterval = 5 * time.Second
	defaultHealthTimeout  = 2 * time.Second
	defaultEjectAfter     = 3
	defaultEjectWindow    = 10 * time.Second
	// maxProbeBackoff caps the spacing of an ejected engine's recovery
	// probes, which doubles from Interval with every failed probe.
	maxProbeBackoff = 16
)

// HealthConfig tunes how a pool decides an engine is usable. Zero values
// take the defaults.
type HealthConfig struct {
	// Interval is the period of the active GET /health checks (default
	// 5s); negative disables them.
	Interval time.Duration
	// Timeout bounds one health check (default 2s).
	Timeout time.Duration
	// EjectAfter is how many consecutive failures (failed health checks,
	// unreachable engine, engine 5xx, broken streams) eject an engine
	// (default 3); negative never ejects. Only a successful health check
	// re-admits an ejected engine, so a pool without active checks never
	// ejects.
	EjectAfter int
	// EjectWindow is how close together failures must come to count as
	// consecutive (default 10s): a failure after a longer quiet spell starts
	// the count again, so scattered faults never add up to an ejection.
	EjectWindow time.Duration
}

func (q QueueConfig) withDefaults() QueueConfig {
	if q.Timeout <= 0 {
		q.Timeout = min(q.Interval, 2*time.Second)
	}
	return q
}

func (h HealthConfig) withDefaults() HealthConfig {
	if h.Interval == 0 {
		h.Interval = defaultHealthInterval
	}
	if h.Timeout <= 0 {
		h.Timeout = defaultHealthTimeout
	}
	if h.EjectAfter == 0 {
		h.EjectAfter = defaultEjectAfter
	}
	if h.EjectWindow <= 0 {
		h.EjectWindow = defaultEjectWindow
	}
	if h.Interval < 0 {
		h.EjectAfter = -1
	}
	return h
}

// PoolConfig configures a Pool.
type PoolConfig struct {
	// Role is one of the Role constants (default RoleCollocated).
	Role   string
	Health HealthConfig
	// HTTPClient sends the health checks (default: a client without
	// environment proxies; the check's own timeout applies).
	HTTPClient *http.Client
	Logger     *slog.Logger
	// Router picks each request's engine; nil means least outstanding
	// requests.
	Router *Router
	// Queue is the scrape of the engines' queue gauges (off by default).
	Queue QueueConfig
}

// Pool balances requests over interchangeable engines: each request goes
// to the admitted engine with the fewest outstanding requests (ties taken
// in turn), an engine failing EjectAfter times in a row (within
// EjectWindow of each other) is ejected until a recovery probe passes, and
// a request that could not reach its engine is sent to another one. The
// pool never ejects its last admitted engine: with every other one out, a
// failing engine stays in rotation (fail open), since refusing every
// request is never better than trying the one engine that may answer. It is safe for concurrent use; Run
// performs the active health checks.
type Pool struct {
	role    string
	members []*poolMember
	health  HealthConfig
	http    *http.Client
	log     *slog.Logger
	next    atomic.Uint64
	// ejectMu serialises ejections, so that two engines failing at once
	// cannot both leave on the count of each other still being admitted.
	ejectMu  sync.Mutex
	failOpen atomic.Int64
	router   *Router
	queue    QueueConfig
	now      func() time.Time // time.Now; tests move it
}

// poolMember is one engine of a pool and what the pool knows of it.
type poolMember struct {
	client      *engine.Client
	outstanding atomic.Int64
	recent      recentRate  // requests routed lately (prefix routing's load)
	queue       engineQueue // the engine's own queue, scraped (prefix routing's load)

	mu          sync.Mutex
	ejected     bool
	failures    int // consecutive, within the pool's EjectWindow
	lastFailure time.Time
	ejections   int64
	lastError   string
	lastCheck   time.Time
	// While ejected: when the next recovery probe is due, and the spacing
	// after it should fail (doubling, capped at maxProbeBackoff intervals).
	nextProbe  time.Time
	probeDelay time.Duration
}

// NewPool returns a pool over engines (at least one, each URL once).
func NewPool(cfg PoolConfig, engines ...*engine.Client) (*Pool, error) {
	if cfg.Role == "" {
		cfg.Role = RoleCollocated
	}
	switch cfg.Role {
	case RoleCollocated, RolePrefill, RoleDecode:
	default:
		return nil, fmt.Errorf("fleet: unknown pool role %q", cfg.Role)
	}
	if len(engines) == 0 {
		return nil, fmt.Errorf("fleet: the %s pool needs at least one engine", cfg.Role)
	}
	p := &Pool{role: cfg.Role, health: cfg.Health.withDefaults(), http: cfg.HTTPClient, log: cfg.Logger, router: cfg.Router,
		queue: cfg.Queue.withDefaults(), now: time.Now}
	if p.http == nil {
		// No proxy from the environment: engines are reached directly, as
		// the engine client reaches them, so a check sees what requests see.
		p.http = &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 2, IdleConnTimeout: 90 * time.Second},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if p.log == nil {
		p.log = slog.Default()
	}
	seen := map[string]bool{}
	for _, c := range engines {
		if c == nil {
			return nil, fmt.Errorf("fleet: nil engine in the %s pool", cfg.Role)
		}
		if seen[c.URL()] {
			return nil, fmt.Errorf("fleet: engine %s is listed twice in the %s pool", c.URL(), cfg.Role)
		}
		seen[c.URL()] = true
		p.members = append(p.members, &poolMember{client: c})
	}
	return p, nil
}

// acquire picks an admitted engine by the pool's routing (by default the
// one with the fewest outstanding requests), skipping those in tried, and
// counts the request on it.
func (p *Pool) acquire(tried []*poolMember, rt *route) (*poolMember, error) {
	start := int(p.next.Add(1) % uint64(len(p.members)))
	best := p.router.pick(p.members, tried, start, rt)
	if best == nil {
		if len(tried) > 0 {
			return nil, errNoEngineLeft
		}
		return nil, p.unavailable()
	}
	best.outstanding.Add(1)
	return best, nil
}

// errNoEngineLeft ends a failover when every admitted engine was tried.
var errNoEngineLeft = errors.New("every admitted engine was tried")

func contains(list []*poolMember, m *poolMember) bool {
	for _, x := range list {
		if x == m {
			return true
		}
	}
	return false
}

// unavailable is the answer when no engine of the pool is admitted.
func (p *Pool) unavailable() *Error {
	return &Error{Status: http.StatusServiceUnavailable, Type: http.StatusText(http.StatusServiceUnavailable),
		Message: fmt.Sprintf("no %s engine available: all %d are ejected after failing health checks or requests; "+
			"retry later", p.role, len(p.members))}
}

// Start sends a streaming request to an engine of the pool. When the
// engine cannot be reached or is overloaded before answering (nothing was
// generated), the request goes to the next admitted engine.
func (p *Pool) Start(ctx context.Context, g *protocol.GenerateRequest, requestID string) (*Call, error) {
	return p.StartMM(ctx, g, requestID, nil)
}

// StartMM is Start for a prompt with multimodal items: their mm_hashes
// and placeholder ranges, sorted by offset (the request's features), which
// prefix routing folds into the prompt's block keys as vLLM folds them into
// its block hashes, so prompts with different images of one size never
// share blocks. Items for a text prompt are nil.
func (p *Pool) StartMM(ctx context.Context, g *protocol.GenerateRequest, requestID string, mm []kvindex.MMItem) (*Call, error) {
	var tried []*poolMember
	var lastErr error
	rt := p.router.begin(g, mm)
	defer p.router.end(&rt)
	for {
		m, err := p.acquire(tried, &rt)
		if err != nil {
			if lastErr != nil {
				return nil, lastErr
			}
			return nil, err
		}
		st, err := m.client.Stream(ctx, g, requestID)
		if err == nil {
			return &Call{stream: st, member: m, pool: p}, nil
		}
		m.outstanding.Add(-1)
		if engineFault(err) {
			p.report(m, err)
		}
		if !retryElsewhere(ctx, err) {
			return nil, err
		}
		p.log.WarnContext(ctx, "engine failed before answering, trying another", "pool", p.role,
			"engine", m.client.URL(), "request_id", requestID, "err", err)
		tried, lastErr = append(tried, m), err
	}
}

// generate sends a non-streaming request with the same balancing and
// failover as Start; it returns the engine that answered (or last failed).
func (p *Pool) generate(ctx context.Context, g *protocol.GenerateRequest, requestID string, mm []kvindex.MMItem) (*protocol.GenerateResponse, *poolMember, error) {
	var tried []*poolMember
	var lastErr error
	var last *poolMember
	rt := p.router.begin(g, mm)
	defer p.router.end(&rt)
	for {
		m, err := p.acquire(tried, &rt)
		if err != nil {
			if lastErr != nil {
				return nil, last, lastErr
			}
			return nil, nil, err
		}
		last = m
		res, err := m.client.Generate(ctx, g, requestID)
		m.outstanding.Add(-1)
		switch {
		case err == nil:
			p.report(m, nil)
			return res, m, nil
		case engineFault(err):
			p.report(m, err)
		}
		if !retryElsewhere(ctx, err) {
			return nil, m, err
		}
		p.log.WarnContext(ctx, "engine failed before answering, trying another", "pool", p.role,
			"engine", m.client.URL(), "request_id", requestID, "err", err)
		tried, lastErr = append(tried, m), err
	}
}

// retryElsewhere reports whether a failed request may go to another
// engine: only when the engine never started it (unreachable, or 503/429).
func retryElsewhere(ctx context.Context, err error) bool {
	var e *engine.Error
	return ctx.Err() == nil && errors.As(err, &e) && e.Temporary
}

// engineFault reports whether err says the engine is unwell: unreachable,
// a 5xx answer or in-stream error, a broken stream or a timeout. Client
// errors (4xx), refused credentials (a deployment fault no ejection
// fixes) and the caller's cancellation are not.
func engineFault(err error) bool {
	var e *engine.Error
	if !errors.As(err, &e) {
		return false
	}
	if e.EngineStatus != 0 {
		return e.EngineStatus >= 500
	}
	return e.Status >= 500
}

// report records the outcome of a request or health check on m: nil
// resets the consecutive failures, an error counts one and may eject m.
func (p *Pool) report(m *poolMember, err error) {
	now := p.now()
	m.mu.Lock()
	if err == nil {
		m.failures = 0
		m.mu.Unlock()
		return
	}
	if m.failures > 0 && now.Sub(m.lastFailure) > p.health.EjectWindow {
		m.failures = 0
	}
	m.failures++
	m.lastFailure = now
	m.lastError = errorDetail(err)
	eject := p.health.EjectAfter > 0 && !m.ejected && m.failures >= p.health.EjectAfter
	m.mu.Unlock()
	if eject {
		p.eject(m, now)
	}
}

// eject takes m out of rotation unless it is the last admitted engine.
func (p *Pool) eject(m *poolMember, now time.Time) {
	p.ejectMu.Lock()
	defer p.ejectMu.Unlock()
	others := 0
	for _, o := range p.members {
		if o != m && !o.isEjected() {
			others++
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ejected {
		return
	}
	if others == 0 {
		p.failOpen.Add(1)
		p.log.Warn("engine failing, kept in rotation: it is the pool's last admitted engine", "pool", p.role,
			"engine", m.client.URL(), "consecutive_failures", m.failures, "err", m.lastError)
		return
	}
	m.ejected = true
	m.ejections++
	m.client.ForgetItems() // it may come back restarted, its item cache empty
	m.probeDelay = p.health.Interval
	m.nextProbe = now.Add(m.probeDelay)
	p.log.Warn("engine ejected", "pool", p.role, "engine", m.client.URL(),
		"consecutive_failures", m.failures, "err", m.lastError)
}

// errorDetail is err for operators (logs, EngineHealth): with the
// transport cause, engine address included, that client messages leave out.
func errorDetail(err error) string {
	var e *engine.Error
	if errors.As(err, &e) {
		if c := e.Unwrap(); c != nil {
			return err.Error() + " (" + c.Error() + ")"
		}
	}
	return err.Error()
}

func (m *poolMember) isEjected() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ejected
}
