package fleet

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vrender/vrender/internal/telemetry"
	"github.com/vrender/vrender/kvindex"
	"github.com/vrender/vrender/protocol"
)

// Routing policies (serve --routing).
const (
	// RoutingLeastOutstanding sends a request to the engine with the
	// fewest outstanding requests (ties in turn): the default.
	RoutingLeastOutstanding = "least-outstanding"
	// RoutingRoundRobin takes the admitted engines in turn.
	RoutingRoundRobin = "round-robin"
	// RoutingPrefix weighs the longest prompt prefix an engine holds in
	// its KV cache against its load (see Router).
	RoutingPrefix = "prefix"
)

// Default scorer weights: a full prefix hit is worth twice the spread of
// load between the idlest and the busiest engine, so a session sticks to
// its engine unless that engine is much busier than the rest, and a
// prefix every engine holds (a shared system prompt) leaves the choice to
// load.
const (
	DefaultPrefixWeight = 2
	DefaultLoadWeight   = 1
	// DefaultQueueWeight counts a request waiting in the engine's queue
	// as one more outstanding request: it is one of vrender's own
	// (counted once already, and waiting is worse than running) or one
	// another router sent.
	DefaultQueueWeight = 1
)

// RouterConfig configures a Router.
type RouterConfig struct {
	// Policy is one of the Routing constants ("" means least-outstanding).
	Policy string
	// Index is where prefixes are looked up and predicted; required for
	// RoutingPrefix.
	Index *kvindex.Index
	// PrefixWeight and LoadWeight weigh an engine's score: PrefixWeight
	// times the fraction of the prompt's blocks it holds, minus
	// LoadWeight times its load over the busiest engine's, load being its
	// outstanding requests plus those routed to it lately (decayed with a
	// 10 s half-life: sessions between turns still count). Zero means the
	// defaults; negative is an error.
	PrefixWeight, LoadWeight float64
	// QueueWeight weighs the requests waiting in an engine's own queue (its
	// vllm:num_requests_waiting, scraped when PoolConfig.Queue is on) into
	// its load, so traffic other routers send to it counts too. Zero means
	// DefaultQueueWeight; negative is an error.
	QueueWeight float64
	// BaseModels are the names a request's "model" may carry for the base
	// model (the served names). A generate request whose model is another
	// non-empty name asks for that LoRA adapter (vLLM's --lora-modules
	// name), and its blocks are keyed with the adapter's name, as the
	// engine keys them (and names them in KV events as lora_name): the same
	// prompt under two adapters, or under one and the base model, never
	// matches the other's blocks.
	BaseModels []string
}

// Router picks an engine of a pool for a request. It is safe for
// concurrent use and may be shared by pools (engines are told apart by
// URL).
type Router struct {
	policy         string
	index          *kvindex.Index
	keyer          kvindex.Keyer
	wPrefix, wLoad float64
	wQueue         float64
	baseModels     []string

	keyBufs sync.Pool // *[]uint64, one request's block keys

	// Figures on /metrics.
	matched  *telemetry.Histogram // blocks matched per prefix-routed request
	decision *telemetry.Histogram // key computation + scoring time
	prompt   atomic.Int64         // prompt blocks of prefix-routed requests
	hits     atomic.Int64         // of which the chosen engine held
	events   atomic.Int64         // KV event batches applied
	lost     atomic.Int64         // KV event batches lost (sequence gaps not replayed)
	unmapped atomic.Int64         // event blocks the index could not key (unknown parent)
	restarts atomic.Int64         // KV event streams that started again (engine restarts, sequence jumps)
	dropped  atomic.Int64         // connections to KV event publishers dropped for breaking the protocol
}

// matchedBuckets are the bounds of vrender_routing_matched_blocks.
var matchedBuckets = []float64{0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096}

// decisionBuckets are the bounds (seconds) of
// vrender_routing_decision_seconds: microseconds when healthy.
var decisionBuckets = []float64{1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 1e-2}

// NewRouter checks cfg and returns a Router.
func NewRouter(cfg RouterConfig) (*Router, error) {
	if cfg.Policy == "" {
		cfg.Policy = RoutingLeastOutstanding
	}
	switch cfg.Policy {
	case RoutingLeastOutstanding, RoutingRoundRobin:
	case RoutingPrefix:
		if cfg.Index == nil {
			return nil, fmt.Errorf("fleet: routing %q needs a prefix index", cfg.Policy)
		}
	default:
		return nil, fmt.Errorf("fleet: unknown routing policy %q (want prefix, least-outstanding or round-robin)", cfg.Policy)
	}
	if cfg.PrefixWeight < 0 || cfg.LoadWeight < 0 || cfg.QueueWeight < 0 {
		return nil, fmt.Errorf("fleet: routing weights must not be negative")
	}
	if cfg.PrefixWeight == 0 {
		cfg.PrefixWeight = DefaultPrefixWeight
	}
	if cfg.LoadWeight == 0 {
		cfg.LoadWeight = DefaultLoadWeight
	}
	if cfg.QueueWeight == 0 {
		cfg.QueueWeight = DefaultQueueWeight
	}
	r := &Router{policy: cfg.Policy, index: cfg.Index, wPrefix: cfg.PrefixWeight, wLoad: cfg.LoadWeight, wQueue: cfg.QueueWeight,
		baseModels: slices.Clone(cfg.BaseModels),
		matched:    telemetry.NewValueHistogram(matchedBuckets), decision: telemetry.NewHistogram(decisionBuckets)}
	if cfg.Index != nil {
		r.keyer = cfg.Index.Keyer()
	}
	return r, nil
}

// Policy is the router's policy.
func (r *Router) Policy() string { return r.policy }

// recentHalfLife is the half-life of recentRate: about a few turns of an
// agent, so that sessions that stick to an engine between their turns
// (outstanding nowhere while they think) still count against it.
const recentHalfLife = 10 * time.Second

// recentRate is an exponentially decayed count of requests routed to an
// engine.
type recentRate struct {
	mu    sync.Mutex
	v     float64
	since time.Time
}

func (r *recentRate) value(now time.Time) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.decayed(now)
}

func (r *recentRate) decayed(now time.Time) float64 {
	if r.since.IsZero() {
		return 0
	}
	return r.v * math.Exp2(-now.Sub(r.since).Seconds()/recentHalfLife.Seconds())
}

func (r *recentRate) add(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.v, r.since = r.decayed(now)+1, now
}

// route is one request's routing state, kept across failover attempts so
// its block keys are computed once.
type route struct {
	keys   []uint64
	buf    *[]uint64
	prefix bool
}

// begin computes g's block keys when the policy needs them. The route is
// a value, kept on the caller's stack: a decision allocates nothing.
func (r *Router) begin(g *protocol.GenerateRequest, mm []kvindex.MMItem) route {
	if r == nil || r.policy != RoutingPrefix {
		return route{}
	}
	bp, _ := r.keyBufs.Get().(*[]uint64)
	if bp == nil {
		bp = new([]uint64)
	}
	salt := ""
	if g.CacheSalt != nil {
		salt = *g.CacheSalt
	}
	keys := r.keyer.KeysMM((*bp)[:0], r.keyer.Root(r.loRA(g), salt), g.TokenIDs, mm)
	return route{keys: keys, buf: bp, prefix: true}
}

// loRA is the LoRA adapter g asks for ("" for the base model): its model
// when that is set and none of the base model's names, as vLLM's serving
// layer resolves it (_maybe_get_adapters).
func (r *Router) loRA(g *protocol.GenerateRequest) string {
	if g.Model == nil || *g.Model == "" || slices.Contains(r.baseModels, *g.Model) {
		return ""
	}
	return *g.Model
}

// end returns the route's buffers.
func (r *Router) end(rt *route) {
	if r == nil {
		return
	}
	if rt.buf != nil {
		*rt.buf = rt.keys[:0]
		r.keyBufs.Put(rt.buf)
		rt.buf, rt.keys = nil, nil
	}
}

// pick chooses among the admitted members not in tried, visiting them from
// start (so ties are taken in turn); nil when none is left.
func (r *Router) pick(members []*poolMember, tried []*poolMember, start int, rt *route) *poolMember {
	if rt.prefix {
		return r.pickPrefix(members, tried, start, rt)
	}
	n := len(members)
	var best *poolMember
	var bestLoad int64
	for i := range n {
		m := members[(start+i)%n]
		if m.isEjected() || contains(tried, m) {
			continue
		}
		if r != nil && r.policy == RoutingRoundRobin {
			return m
		}
		if load := m.outstanding.Load(); best == nil || load < bestLoad {
			best, bestLoad = m, load
		}
	}
	return best
}

// candidate is one engine's standing in a prefix decision.
type candidate struct {
	m       *poolMember
	rot     int     // position in the visit from start: full ties go to the first
	load    int64   // outstanding requests: the tie-break after the score
	penalty float64 // the score's load term
	guess   int     // an estimate of the blocks it holds, to try likely winners first
}

// score is c's score holding match of the prompt's nk blocks.
func (r *Router) score(c *candidate, match, nk int) float64 {
	s := -c.penalty
	if nk > 0 {
		s += r.wPrefix * float64(match) / float64(nk)
	}
	return s
}

// beats reports whether c scoring s wins over b scoring bs: the higher
// score, then fewer outstanding requests, then the earlier in turn.
func beats(c *candidate, s float64, b *candidate, bs float64) bool {
	if s != bs {
		return s > bs
	}
	if c.load != b.load {
		return c.load < b.load
	}
	return c.rot < b.rot
}

// pickPrefix is pick for prefix routing: the highest score, wPrefix times
// the fraction of the prompt's blocks an engine holds minus wLoad times
// its load over the busiest engine's. An engine's held prefix is found by
// a scan that stops at its first missing block, one probe per held block;
// to spend those probes on the likely winner, engines are tried in the
// order of a cheap estimate, and an engine that would need more than it
// can hold to beat the best so far is dropped after one probe (holding
// the block it would need last is necessary): a 32k-token prompt held by
// one engine costs that engine's scan, not every engine's.
func (r *Router) pickPrefix(members []*poolMember, tried []*poolMember, start int, rt *route) *poolMember {
	began := time.Now()
	view := r.index.At()
	n := len(members)
	var buf [16]candidate
	cands := buf[:0]
	if n > len(buf) {
		cands = make([]candidate, 0, n)
	}
	maxLoad := 0.0
	var loadBuf [16]float64
	loads := loadBuf[:0]
	if n > len(loadBuf) {
		loads = make([]float64, 0, n)
	}
	for _, m := range members {
		l := r.load(m, began)
		loads = append(loads, l)
		maxLoad = max(maxLoad, l)
	}
	nk := len(rt.keys)
	for i := range n {
		k := (start + i) % n
		m := members[k]
		if m.isEjected() || contains(tried, m) {
			continue
		}
		c := candidate{m: m, rot: i, load: m.outstanding.Load()}
		if maxLoad > 0 {
			c.penalty = r.wLoad * loads[k] / maxLoad
		}
		if nk > 0 {
			c.guess = view.Estimate(m.client.URL(), rt.keys)
		}
		cands = append(cands, c)
	}
	if len(cands) == 0 {
		return nil
	}
	// Likely winners first: insertion sort, as pools are small.
	for i := 1; i < len(cands); i++ {
		for j := i; j > 0 && beats(&cands[j], r.score(&cands[j], cands[j].guess, nk), &cands[j-1], r.score(&cands[j-1], cands[j-1].guess, nk)); j-- {
			cands[j], cands[j-1] = cands[j-1], cands[j]
		}
	}
	var best *candidate
	bestScore, bestMatch := 0.0, 0
	for i := range cands {
		c := &cands[i]
		url := c.m.client.URL()
		if best != nil && nk > 0 {
			// need: the fewest held blocks with which c beats best.
			lo, hi := 0, nk+1
			for lo < hi {
				mid := int(uint(lo+hi) >> 1)
				if beats(c, r.score(c, mid, nk), best, bestScore) {
					hi = mid
				} else {
					lo = mid + 1
				}
			}
			if lo > nk || lo > 0 && !view.Holds(url, rt.keys[lo-1]) {
				continue
			}
		}
		match := 0
		if nk > 0 {
			match = view.Match(url, rt.keys)
		}
		if s := r.score(c, match, nk); best == nil || beats(c, s, best, bestScore) {
			best, bestScore, bestMatch = c, s, match
		}
	}
	m := best.m
	m.recent.add(began)
	view.Predict(m.client.URL(), rt.keys, bestMatch)
	r.decision.Observe(time.Since(began))
	r.matched.ObserveValue(int64(bestMatch))
	r.prompt.Add(int64(nk))
	r.hits.Add(int64(bestMatch))
	return m
}

// load is m's load for the scorer: its outstanding requests plus those
// routed to it lately, plus the requests waiting in its own queue by its
// last metrics scrape (none when not scraped).
func (r *Router) load(m *poolMember, now time.Time) float64 {
	return float64(m.outstanding.Load()) + m.recent.value(now) + r.wQueue*float64(m.queue.waitingNow())
}

// eventsLost counts KV event batches that were lost (a sequence gap the
// engine's replay buffer could not fill).
func (r *Router) eventsLost(n int64) { r.lost.Add(n) }

// WritePrometheus writes the routing figures.
func (r *Router) WritePrometheus(w io.Writer) error {
	if err := telemetry.WriteHeader(w, "vrender_routing_info", "gauge", "The routing policy (serve --routing)."); err != nil {
		return err
	}
	if err := telemetry.WriteCount(w, "vrender_routing_info", telemetry.Label("policy", r.policy), 1, telemetry.StyleGo); err != nil {
		return err
	}
	if r.policy != RoutingPrefix {
		return nil
	}
	const matched, decision = "vrender_routing_matched_blocks", "vrender_routing_decision_seconds"
	if err := telemetry.WriteHeader(w, matched, "histogram", "KV blocks of the prompt the chosen engine held, per prefix-routed request."); err != nil {
		return err
	}
	if err := r.matched.WriteSeriesStyle(w, matched, "", telemetry.StyleGo); err != nil {
		return err
	}
	if err := telemetry.WriteHeader(w, decision, "histogram", "Time to compute a request's block keys and choose its engine."); err != nil {
		return err
	}
	if err := r.decision.WriteSeries(w, decision, ""); err != nil {
		return err
	}
	rows := []struct {
		name, typ, help string
		v               int64
	}{
		{"vrender_routing_prompt_blocks_total", "counter", "Full KV blocks of prefix-routed prompts.", r.prompt.Load()},
		{"vrender_routing_matched_blocks_total", "counter", "Of those, blocks the chosen engine held (by event or prediction).", r.hits.Load()},
		{"vrender_routing_index_blocks", "gauge", "Entries in the prefix index, over all engines.", int64(r.index.Len())},
		{"vrender_routing_kv_event_batches_total", "counter", "KV event batches received from engines and applied.", r.events.Load()},
		{"vrender_routing_kv_event_batches_lost_total", "counter", "KV event batches lost: sequence gaps the engine's replay could not fill.", r.lost.Load()},
		{"vrender_routing_kv_event_blocks_unindexed_total", "counter", "Stored blocks from KV events the index could not key (parent unknown, other block size).", r.unmapped.Load()},
		{"vrender_routing_kv_event_restarts_total", "counter", "KV event streams that started again (the sequence went back or jumped past 2^20): the engine's index entries dropped.", r.restarts.Load()},
		{"vrender_routing_kv_event_publishers_dropped_total", "counter", "Connections to KV event publishers (PUB or replay) dropped because the peer broke ZMTP or vLLM's message shapes.", r.dropped.Load()},
	}
	for _, row := range rows {
		if err := telemetry.WriteHeader(w, row.name, row.typ, row.help); err != nil {
			return err
		}
		if err := telemetry.WriteCount(w, row.name, "", row.v, telemetry.StyleGo); err != nil {
			return err
		}
	}
	return nil
}
