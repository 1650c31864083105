package fleet

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/enginesim"
	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/kvevents"
	"github.com/vrender/vrender/kvindex"
	"github.com/vrender/vrender/model"
)

func zmqEndpoint(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "tcp://" + l.Addr().String()
}

// eventSim is an engine-sim with a prefix cache publishing KV events.
type eventSim struct {
	url, ep, replay string
	pub             *kvevents.Publisher
}

func startEventSim(t *testing.T, m *model.Model, ep, replay string) *eventSim {
	t.Helper()
	pub, err := kvevents.NewPublisher(kvevents.PublisherConfig{Endpoint: ep, ReplayEndpoint: replay, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	sim, err := enginesim.New(m, enginesim.Config{ServedModelName: "qwen", Logger: quietLog(), PrefixCacheBlocks: 256,
		BlockSize: 16, KVEvents: pub})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(func() { srv.Close(); _ = pub.Close() })
	return &eventSim{url: srv.URL, ep: ep, replay: replay, pub: pub}
}

func (s *eventSim) generate(t *testing.T, tokens []int) { s.generateWith(t, tokens, "") }

// generateWith sends tokens with extra members (e.g. `,"features":{…}`).
func (s *eventSim) generateWith(t *testing.T, tokens []int, extra string) {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"token_ids":[`)
	for i, id := range tokens {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(id))
	}
	b.WriteString(`],"sampling_params":{"max_tokens":1}` + extra + `}`)
	resp, err := http.Post(s.url+"/inference/v1/generate", "application/json", strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("generate: %s", resp.Status)
	}
}

func waitMatch(t *testing.T, x *kvindex.Index, engine string, keys []uint64, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := x.Match(engine, keys)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("engine %s: Match = %d, want %d", engine, got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// followEvents is a prefix router over a fresh index (16-token blocks)
// following the sources' KV events until the test ends.
func followEvents(t *testing.T, sources []KVEventSource) (*Router, *kvindex.Index) {
	t.Helper()
	x := kvindex.New(kvindex.Config{Keyer: kvindex.NewKeyer(16, "qwen")})
	r, err := NewRouter(RouterConfig{Policy: RoutingPrefix, Index: x})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = r.RunKVEvents(ctx, sources, quietLog())
	}()
	t.Cleanup(func() { cancel(); <-done })
	return r, x
}

// TestKVEventsFeedTheIndex: an engine-sim's KV events (its own opaque
// block hashes, vLLM's wire format over ZMQ) become index entries under
// vrender's keys, so routing follows them; a reset clears them, and a
// restarted engine (sequence from 0) loses what it held before.
func TestKVEventsFeedTheIndex(t *testing.T) {
	m := testmodel.Load(t, "qwen3")
	a := startEventSim(t, m, zmqEndpoint(t), zmqEndpoint(t))
	b := startEventSim(t, m, zmqEndpoint(t), zmqEndpoint(t))
	r, x := followEvents(t, []KVEventSource{{Engine: a.url, Endpoint: a.ep, ReplayEndpoint: a.replay},
		{Engine: b.url + "/", Endpoint: b.ep, ReplayEndpoint: b.replay}})

	first := prompt(16*6+3, 500).TokenIDs
	keys := x.Keyer().Keys(nil, x.Keyer().Root("", ""), first)
	// The subscription may land after the first batch: the replay socket
	// brings it, so one request is enough.
	a.generate(t, first)
	waitMatch(t, x, a.url, keys, 6)
	if got := x.Match(b.url, keys); got != 0 {
		t.Errorf("engine b holds %d blocks it never computed", got)
	}

	pool, err := NewPool(PoolConfig{Health: HealthConfig{Interval: -1}, Router: r}, newTestClient(t, b.url), newTestClient(t, a.url))
	if err != nil {
		t.Fatal(err)
	}
	longer := prompt(16*10, 500)
	if e := take(t, pool, longer); pool.members[e].client.URL() != a.url {
		t.Errorf("a prompt extending engine a's blocks went to %s", pool.members[e].client.URL())
	}

	resp, err := http.Post(a.url+"/reset_prefix_cache", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	waitMatch(t, x, a.url, keys, 0) // AllBlocksCleared (the prediction went too)

	// Engine b restarts: a new publisher on its addresses numbers from 0.
	b.generate(t, first)
	waitMatch(t, x, b.url, keys, 6)
	_ = b.pub.Close()
	b2 := startEventSim(t, m, b.ep, b.replay)
	other := prompt(16*2, 9000).TokenIDs
	deadline := time.Now().Add(10 * time.Second)
	for x.Match(b.url, keys) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the restarted engine's old blocks are still in the index")
		}
		b2.generate(t, other) // until the subscriber has reconnected and seen seq 0 again
		time.Sleep(50 * time.Millisecond)
	}
	waitMatch(t, x, b.url, x.Keyer().Keys(nil, x.Keyer().Root("", ""), other), 2)
	var sb strings.Builder
	_ = r.WritePrometheus(&sb)
	if !strings.Contains(sb.String(), "vrender_routing_kv_event_batches_total") || strings.Contains(sb.String(), "vrender_routing_kv_event_batches_total 0\n") {
		t.Errorf("no event batches counted:\n%s", sb.String())
	}
}

// FuzzApplyKVEvents: whatever batch a publisher's bytes decode to,
// applying it to the index neither panics nor leaves the index
// unreadable: events are remote input down to the index.
func FuzzApplyKVEvents(f *testing.F) {
	salt, lora := "salt", "sql-lora"
	parent := kvevents.IntHash(7)
	stored := kvevents.Event{Tag: kvevents.TagBlockStored, BlockSize: 16, TokenIDs: make([]int, 32),
		BlockHashes: []kvevents.Hash{kvevents.IntHash(1), {Bytes: []byte("0123456789abcdef"), IsBytes: true}}}
	for _, b := range []kvevents.Batch{
		{Events: []kvevents.Event{stored}},
		{Events: []kvevents.Event{func() kvevents.Event {
			e := stored
			e.ParentBlockHash, e.LoRAName, e.ExtraKeys = &parent, &lora, [][]any{{lora, salt}, nil}
			return e
		}()}},
		{Events: []kvevents.Event{{Tag: kvevents.TagBlockRemoved, BlockHashes: stored.BlockHashes}, {Tag: kvevents.TagAllBlocksCleared}}},
		{Events: []kvevents.Event{func() kvevents.Event {
			e := stored
			e.ExtraKeys = [][]any{{[]any{"4f0c", 3}, salt}, {[]any{"4f0c", -13}}}
			return e
		}()}},
	} {
		payload, err := kvevents.Encode(b)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(payload)
	}
	x := kvindex.New(kvindex.Config{Keyer: kvindex.NewKeyer(16, "qwen")})
	r, err := NewRouter(RouterConfig{Policy: RoutingPrefix, Index: x})
	if err != nil {
		f.Fatal(err)
	}
	keys := x.Keyer().Keys(nil, x.Keyer().Root("", ""), make([]int, 64))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := kvevents.Decode(data)
		if err != nil {
			return
		}
		r.applyKVEvents("http://e", b, quietLog())
		_ = x.Match("http://e", keys)
		var sb strings.Builder
		if err := r.WritePrometheus(&sb); err != nil {
			t.Fatal(err)
		}
	})
}
