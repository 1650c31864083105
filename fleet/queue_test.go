package fleet

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vrender/vrender/enginesim"
	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/kvindex"
	"github.com/vrender/vrender/orchestrator/engine"
)

func TestParseQueueMetrics(t *testing.T) {
	for _, c := range []struct {
		name, in         string
		waiting, running int64
		err              bool
	}{
		{name: "vllm", in: "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n" +
			"# TYPE vllm:num_requests_waiting gauge\n" +
			`vllm:num_requests_waiting{engine="0",model_name="m"} 7.0` + "\n" +
			`vllm:num_requests_running{engine="0",model_name="m"} 3.0` + "\n", waiting: 7, running: 3},
		{name: "data-parallel ranks summed", in: `vllm:num_requests_waiting{engine="0"} 2.0` + "\n" + `vllm:num_requests_waiting{engine="1"} 5.0` + "\n" +
			`vllm:num_requests_running{engine="0"} 1.0` + "\n" + `vllm:num_requests_running{engine="1"} 1.0` + "\n", waiting: 7, running: 2},
		{name: "no labels, a timestamp", in: "vllm:num_requests_waiting 4 1700000000000\nvllm:num_requests_running 1\n", waiting: 4, running: 1},
		{name: "a label value with a brace", in: `vllm:num_requests_waiting{model_name="a}b"} 2.0` + "\n", waiting: 2},
		{name: "names sharing the prefix are other metrics", in: `vllm:num_requests_waiting_by_reason{reason="x"} 9.0` + "\n" + `vllm:num_requests_waiting{} 1.0` + "\n", waiting: 1},
		{name: "no waiting gauge", in: "vllm:num_requests_running 3\nother 1\n", err: true},
		{name: "not a number", in: "vllm:num_requests_waiting{} many\n", err: true},
		{name: "negative", in: "vllm:num_requests_waiting -1\n", err: true},
		{name: "no value", in: "vllm:num_requests_waiting{engine=\"0\"}\n", err: true},
		{name: "empty", in: "", err: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, r, err := parseQueueMetrics(strings.NewReader(c.in))
			if (err != nil) != c.err || w != c.waiting || r != c.running {
				t.Errorf("= %d %d %v, want %d %d (error %v)", w, r, err, c.waiting, c.running, c.err)
			}
		})
	}
}

// TestBusyEngineLosesPrefixTie: two engine-sims hold the same prefix; one
// has requests waiting in its queue that vrender did not send (another
// router's), which only its /metrics shows. With queue scrapes on, the
// prefix tie goes to the idle engine; without them, to the busy one,
// first in turn.
func TestBusyEngineLosesPrefixTie(t *testing.T) {
	m := testmodel.Load(t, "qwen3")
	_, busy := startSim(t, m, enginesim.Config{SerialPrefill: true, FirstTokenLatency: time.Minute})
	_, idle := startSim(t, m, enginesim.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for range 4 { // one prefilling, three waiting
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, busy.URL()+"/inference/v1/generate",
				strings.NewReader(`{"token_ids":[1,2,3],"sampling_params":{"max_tokens":2}}`))
			req.Header.Set("Content-Type", "application/json")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		})
	}
	for _, scrape := range []bool{false, true} {
		x := kvindex.New(kvindex.Config{Keyer: kvindex.NewKeyer(16, "qwen")})
		r, err := NewRouter(RouterConfig{Policy: RoutingPrefix, Index: x})
		if err != nil {
			t.Fatal(err)
		}
		q := QueueConfig{}
		if scrape {
			q.Interval = time.Hour // scraped by hand below
		}
		p, err := NewPool(PoolConfig{Health: HealthConfig{Interval: -1}, Router: r, Queue: q, Logger: quietLog()}, busy, idle)
		if err != nil {
			t.Fatal(err)
		}
		g := prompt(256, 0)
		rt := r.begin(g, nil)
		for _, mb := range p.members {
			x.Predict(mb.client.URL(), rt.keys, 0)
		}
		if scrape {
			deadline := time.Now().Add(10 * time.Second)
			for {
				p.scrapeQueuesNow(context.Background())
				if h := p.Health(); h[0].QueueKnown && h[0].QueueWaiting == 3 && h[0].QueueRunning == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("busy engine's queue never read as 3 waiting, 1 running: %+v", p.Health()[0])
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		got := r.pick(p.members, nil, 0, &rt)
		r.end(&rt)
		want := idle
		if !scrape {
			want = busy // unknown queues: a full tie, the first in turn
		}
		if got.client != want {
			t.Errorf("scrape %v: chose %s, want %s", scrape, got.client.URL(), want.URL())
		}
	}
}

// TestQueueScrapeTolerance: an engine without /metrics, one whose
// /metrics lacks the gauges and one that never answers leave their queue
// unknown (an empty queue to the scorer); the hanging scrape ends at its
// timeout and a routing decision made meanwhile does not wait for it.
func TestQueueScrapeTolerance(t *testing.T) {
	release := make(chan struct{})
	var hung sync.WaitGroup
	hung.Add(1)
	servers := []http.HandlerFunc{
		func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) },
		func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("process_cpu_seconds_total 1\n")) },
		func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == metricsPath {
				hung.Done()
				select {
				case <-release:
				case <-r.Context().Done():
				}
			}
		},
	}
	var clients []*engine.Client
	for _, h := range servers {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		c, err := engine.New(srv.URL, engine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	defer close(release)
	x := kvindex.New(kvindex.Config{})
	r, err := NewRouter(RouterConfig{Policy: RoutingPrefix, Index: x})
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPool(PoolConfig{Health: HealthConfig{Interval: -1}, Router: r, Logger: quietLog(),
		Queue: QueueConfig{Interval: time.Hour, Timeout: 300 * time.Millisecond}}, clients...)
	if err != nil {
		t.Fatal(err)
	}
	for _, mb := range p.members { // as if an earlier scrape had succeeded
		mb.queue.waiting.Store(5)
		mb.queue.known.Store(true)
	}
	done := make(chan struct{})
	start := time.Now()
	go func() {
		p.scrapeQueuesNow(context.Background())
		close(done)
	}()
	hung.Wait()
	rt := r.begin(prompt(64, 0), nil)
	if got := r.pick(p.members, nil, 0, &rt); got == nil {
		t.Error("no engine chosen while a scrape hangs")
	}
	r.end(&rt)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a scrape of an engine that never answers did not end at its timeout")
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("scrapes ended after %v, before the hanging one's timeout", d)
	}
	for _, h := range p.Health() {
		if h.QueueKnown {
			t.Errorf("%s: queue known after a failed scrape: %+v", h.URL, h)
		}
	}
}

// FuzzParseQueueMetrics: whatever an engine's /metrics says, the parse
// neither panics nor yields a negative queue.
func FuzzParseQueueMetrics(f *testing.F) {
	f.Add("vllm:num_requests_waiting{engine=\"0\"} 7.0\nvllm:num_requests_running 3\n")
	f.Add("vllm:num_requests_waiting 1e12\nvllm:num_requests_waiting 1e12\n")
	f.Add("vllm:num_requests_waiting{a=\"}\"} 2 17\n# HELP x\n")
	f.Fuzz(func(t *testing.T, in string) {
		w, r, err := parseQueueMetrics(strings.NewReader(in))
		if err == nil && (w < 0 || r < 0) {
			t.Fatalf("negative queue %d %d from %q", w, r, in)
		}
	})
}
