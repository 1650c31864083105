package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vrender/vrender/orchestrator/engine"
	"github.com/vrender/vrender/protocol"
)

// fakeEngine is a tokens-only engine whose answers a test steers.
type fakeEngine struct {
	srv      *httptest.Server
	health   atomic.Int32 // status of GET /health; 0 means 200
	mode     atomic.Value // "ok", "hold" (stream until the client leaves) or "500"
	requests atomic.Int64
}

func newFakeEngine(t *testing.T) *fakeEngine {
	t.Helper()
	f := &fakeEngine{}
	f.mode.Store("ok")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		if s := f.health.Load(); s != 0 {
			w.WriteHeader(int(s))
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("POST /inference/v1/generate", func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		switch f.mode.Load().(string) {
		case "500":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"error":{"message":"EngineCore died","type":"InternalServerError","param":null,"code":500}}`)
			return
		case "hold":
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"request_id\":\"x\",\"choices\":[{\"index\":0,\"token_ids\":[1],\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n")
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeEngine) client(t *testing.T) *engine.Client {
	t.Helper()
	return newTestClient(t, f.srv.URL)
}

func newTestClient(t *testing.T, url string) *engine.Client {
	t.Helper()
	c, err := engine.New(url, engine.Options{Retries: -1, IdleTimeout: 5 * time.Second, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func quietLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

func testRequest() *protocol.GenerateRequest {
	p := protocol.NewSamplingParams()
	return &protocol.GenerateRequest{TokenIDs: []int{1, 2, 3}, SamplingParams: p}
}

// engineError is err as the engine client's error, which is what a pool
// passes on when its engines fail.
func engineError(t *testing.T, err error) *engine.Error {
	t.Helper()
	var e *engine.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v (%T), want an engine error", err, err)
	}
	return e
}

// drain reads a call to its end.
func drain(t *testing.T, c *Call) {
	t.Helper()
	defer c.Close()
	for {
		_, err := c.Recv()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("recv: %v", err)
		}
	}
}

func TestPoolLeastOutstanding(t *testing.T) {
	fakes := []*fakeEngine{newFakeEngine(t), newFakeEngine(t), newFakeEngine(t)}
	var clients []*engine.Client
	byURL := map[string]int{}
	for i, f := range fakes {
		f.mode.Store("hold")
		clients = append(clients, f.client(t))
		byURL[f.srv.URL] = i
	}
	p, err := NewPool(PoolConfig{Health: HealthConfig{Interval: -1}, Logger: quietLog()}, clients...)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := func() *Call {
		t.Helper()
		c, err := p.Start(ctx, testRequest(), fmt.Sprintf("r%d", time.Now().UnixNano()))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// Three held requests land on three different engines.
	calls := []*Call{start(), start(), start()}
	seen := map[string]bool{}
	for _, c := range calls {
		seen[c.Engine().URL()] = true
	}
	if len(seen) != 3 {
		t.Fatalf("3 concurrent requests went to %d engines, want 3", len(seen))
	}
	// Freeing one engine sends the next request there, whatever the turn.
	freed := calls[1].Engine().URL()
	calls[1].Close()
	for range 3 {
		c := start()
		if c.Engine().URL() != freed {
			t.Fatalf("request went to %s (outstanding %v), want the idle %s", c.Engine().URL(), loads(p), freed)
		}
		c.Close()
	}
	// One each on the two busy engines, none on the freed one: the next
	// request fills the gap, the one after goes anywhere.
	c4 := start()
	if c4.Engine().URL() != freed {
		t.Fatalf("request went to %s, want the idle %s", c4.Engine().URL(), freed)
	}
	c5 := start()
	if got := loads(p); got[0]+got[1]+got[2] != 4 {
		t.Fatalf("outstanding %v, want 4 in all", got)
	}
	for _, c := range append(calls, c4, c5) {
		c.Close()
	}
	if got := loads(p); got != [3]int64{} {
		t.Fatalf("outstanding after close %v, want zeros", got)
	}
}

func loads(p *Pool) [3]int64 {
	var out [3]int64
	for i, h := range p.Health() {
		out[i] = h.Outstanding
	}
	return out
}

func TestPoolEjectsAndReadmits(t *testing.T) {
	bad, good := newFakeEngine(t), newFakeEngine(t)
	bad.mode.Store("500")
	p, err := NewPool(PoolConfig{Health: HealthConfig{Interval: time.Hour, EjectAfter: 2}, Logger: quietLog()},
		bad.client(t), good.client(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	failures := 0
	for i := range 10 {
		c, err := p.Start(ctx, testRequest(), fmt.Sprintf("e%d", i))
		if err != nil {
			failures++
			if e := engineError(t, err); e.Status != http.StatusBadGateway || !strings.Contains(e.Message, "EngineCore died") {
				t.Fatalf("failure %v, want a 502 with the engine's message", e)
			}
			continue
		}
		drain(t, c)
	}
	if failures != 2 {
		t.Fatalf("%d requests failed, want exactly 2 before the bad engine is ejected", failures)
	}
	h := p.Health()
	if h[0].Healthy || h[0].Ejections != 1 || !h[1].Healthy {
		t.Fatalf("health %+v, want the first ejected once and the second healthy", h)
	}
	// No recovery probe before its backoff has passed.
	p.checkNow(ctx)
	if h := p.Health(); h[0].Healthy || !h[0].LastCheck.IsZero() {
		t.Fatalf("probed before its backoff: %+v", h[0])
	}
	// /health still answers 200 (a dead engine core behind a live HTTP
	// server): the probe re-admits it, and two more failures eject it again.
	p.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	p.checkNow(ctx)
	if h := p.Health(); !h[0].Healthy || h[0].ConsecutiveFailures != 0 || h[0].LastCheck.IsZero() {
		t.Fatalf("after a passing check %+v, want re-admitted", h[0])
	}
	bad.mode.Store("ok")
	before := bad.requests.Load()
	for i := range 4 {
		c, err := p.Start(ctx, testRequest(), fmt.Sprintf("f%d", i))
		if err != nil {
			t.Fatal(err)
		}
		drain(t, c)
	}
	if bad.requests.Load() == before {
		t.Fatal("re-admitted engine got no request")
	}
}

func TestPoolHealthCheckEjection(t *testing.T) {
	a, b := newFakeEngine(t), newFakeEngine(t)
	p, err := NewPool(PoolConfig{Role: RoleDecode, Health: HealthConfig{Interval: 10 * time.Millisecond, EjectAfter: 2,
		Timeout: time.Second}, Logger: quietLog()}, a.client(t), b.client(t))
	if err != nil {
		t.Fatal(err)
	}
	a.health.Store(http.StatusServiceUnavailable)
	b.health.Store(http.StatusServiceUnavailable)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	// Both fail their checks: one is ejected, the last one stays in
	// rotation (fail open) and still takes requests.
	waitFor(t, func() bool { h := p.Health(); return h[0].Healthy != h[1].Healthy && h[0].FailOpen > 0 })
	h := p.Health()
	kept := 0
	if !h[0].Healthy {
		kept = 1
	}
	for range 50 {
		if h := p.Health(); !h[kept].Healthy || h[1-kept].Healthy {
			t.Fatalf("the pool left its last engine: %+v", h)
		}
		time.Sleep(time.Millisecond)
	}
	c, err := p.Start(ctx, testRequest(), "kept")
	if err != nil {
		t.Fatal(err)
	}
	if c.Engine().URL() != h[kept].URL {
		t.Fatalf("request went to %s, want the engine kept in rotation %s", c.Engine().URL(), h[kept].URL)
	}
	drain(t, c)
	// The ejected one recovers at its next probe (backoff capped at 16
	// intervals: 160 ms here).
	a.health.Store(0)
	b.health.Store(0)
	waitFor(t, func() bool { h := p.Health(); return h[0].Healthy && h[1].Healthy })
	cancel()
	<-done
}

func TestPoolFailsOverUnreachableEngine(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now: connection refused
	good := newFakeEngine(t)
	p, err := NewPool(PoolConfig{Health: HealthConfig{Interval: time.Hour, EjectAfter: 1}, Logger: quietLog()},
		newTestClient(t, deadURL), good.client(t))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		c, err := p.Start(context.Background(), testRequest(), fmt.Sprintf("u%d", i))
		if err != nil {
			t.Fatalf("request %d: %v (the reachable engine should have taken it)", i, err)
		}
		if c.Engine().URL() != good.srv.URL {
			t.Fatalf("request %d held by %s", i, c.Engine().URL())
		}
		drain(t, c)
	}
	if h := p.Health(); h[0].Healthy || !strings.Contains(h[0].LastError, "connection refused") {
		t.Fatalf("dead engine %+v, want ejected for connection refused", h[0])
	}
	// Only unreachable engines left: the client gets the 503 of the last try.
	p2, err := NewPool(PoolConfig{Health: HealthConfig{Interval: time.Hour}, Logger: quietLog()}, newTestClient(t, deadURL))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p2.Start(context.Background(), testRequest(), "x")
	if e := engineError(t, err); e.Status != http.StatusServiceUnavailable || !strings.Contains(e.Message, "unreachable") {
		t.Fatalf("got %v, want 503 unreachable", e)
	}
}

func TestNewPoolRejects(t *testing.T) {
	f := newFakeEngine(t)
	c := f.client(t)
	tests := []struct {
		name string
		cfg  PoolConfig
		eng  []*engine.Client
		want string
	}{
		{"none", PoolConfig{}, nil, "at least one engine"},
		{"twice", PoolConfig{}, []*engine.Client{c, c}, "listed twice"},
		{"role", PoolConfig{Role: "both"}, []*engine.Client{c}, "unknown pool role"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewPool(tc.cfg, tc.eng...); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	pre, _ := NewPool(PoolConfig{Role: RolePrefill}, c)
	if _, err := NewPD(pre, pre, nil); err == nil {
		t.Fatal("NewPD accepted a prefill pool as decode pool")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
