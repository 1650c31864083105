package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vrender/vrender/enginesim"
	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/kvindex"
	"github.com/vrender/vrender/orchestrator/engine"
	"github.com/vrender/vrender/protocol"
)

func newTestPD(t *testing.T, prefill, decode *engine.Client) *PDPool {
	t.Helper()
	h := HealthConfig{Interval: -1}
	pp, err := NewPool(PoolConfig{Role: RolePrefill, Health: h, Logger: quietLog()}, prefill)
	if err != nil {
		t.Fatal(err)
	}
	dp, err := NewPool(PoolConfig{Role: RoleDecode, Health: h, Logger: quietLog()}, decode)
	if err != nil {
		t.Fatal(err)
	}
	pd, err := NewPD(pp, dp, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	return pd
}

// TestPDStart: the prefill engine gets vLLM's proxy's request (one token,
// not streamed, do_remote_decode), the decode engine the original request
// with what the prefill returned, and the caller the decode engine's
// stream.
func TestPDStart(t *testing.T) {
	m := testmodel.Load(t, "qwen3")
	reg := enginesim.NewKVRegistry()
	producer, pc := startSim(t, m, enginesim.Config{KVRole: enginesim.KVRoleProducer, KVRegistry: reg})
	consumer, cc := startSim(t, m, enginesim.Config{KVRole: enginesim.KVRoleConsumer, KVRegistry: reg})
	g := testRequest()
	maxTokens, stream := 5, true
	g.SamplingParams.MaxTokens, g.SamplingParams.ExplicitMaxTokens, g.Stream = &maxTokens, true, &stream
	call, err := newTestPD(t, pc, cc).Start(context.Background(), g, "pd-1")
	if err != nil {
		t.Fatal(err)
	}
	if call.Engine() != cc {
		t.Errorf("the stream is %s's, want the decode engine's", call.Engine().URL())
	}
	drain(t, call)
	preqs, dreqs := producer.Requests(), consumer.Requests()
	if len(preqs) != 1 || len(dreqs) != 1 {
		t.Fatalf("producer saw %d requests, consumer %d; want 1 each", len(preqs), len(dreqs))
	}
	p, d := preqs[0], dreqs[0]
	if p.SamplingParams.MaxTokens == nil || *p.SamplingParams.MaxTokens != 1 || p.Stream == nil || *p.Stream ||
		!bytes.Contains(p.KVTransferParams, []byte(`"do_remote_decode":true`)) {
		t.Errorf("prefill request: max_tokens %v stream %v kv %s", p.SamplingParams.MaxTokens, p.Stream, p.KVTransferParams)
	}
	var kv struct {
		DoRemotePrefill bool `json:"do_remote_prefill"`
	}
	if err := json.Unmarshal(d.KVTransferParams, &kv); err != nil || !kv.DoRemotePrefill {
		t.Errorf("decode request kv_transfer_params %s (%v)", d.KVTransferParams, err)
	}
	if d.SamplingParams.MaxTokens == nil || *d.SamplingParams.MaxTokens != 5 || !slices.Equal(d.TokenIDs, g.TokenIDs) {
		t.Errorf("decode request is not the original: max_tokens %v, tokens %v", d.SamplingParams.MaxTokens, d.TokenIDs)
	}
	if g.KVTransferParams != nil || *g.SamplingParams.MaxTokens != 5 {
		t.Errorf("the caller's request was changed: %+v", g)
	}
}

// TestPDSideErrors: an engine's failure names the side it happened on;
// the fleet's own errors and the caller's cancellation pass unchanged.
func TestPDSideErrors(t *testing.T) {
	m := testmodel.Load(t, "qwen3")
	reg := enginesim.NewKVRegistry()
	_, goodP := startSim(t, m, enginesim.Config{KVRole: enginesim.KVRoleProducer, KVRegistry: reg})
	_, goodD := startSim(t, m, enginesim.Config{KVRole: enginesim.KVRoleConsumer, KVRegistry: reg})
	_, badP := startSim(t, m, enginesim.Config{KVRole: enginesim.KVRoleProducer, Fault: enginesim.Fault{Kind: enginesim.FaultError}})
	_, badD := startSim(t, m, enginesim.Config{KVRole: enginesim.KVRoleConsumer, Fault: enginesim.Fault{Kind: enginesim.FaultError}})
	for _, tc := range []struct {
		name            string
		prefill, decode *engine.Client
		want            string
	}{
		{"prefill 500", badP, goodD, "prefill engine: EngineCore encountered an issue"},
		{"decode 500", goodP, badD, "decode engine: EngineCore encountered an issue"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newTestPD(t, tc.prefill, tc.decode).Start(context.Background(), testRequest(), "f")
			var e *Error
			if !errors.As(err, &e) || e.Status != http.StatusBadGateway || e.Type != http.StatusText(http.StatusBadGateway) ||
				!strings.Contains(e.Message, tc.want) {
				t.Fatalf("got %v, want a 502 %q", err, tc.want)
			}
		})
	}
	own := &Error{Status: http.StatusServiceUnavailable, Message: "no prefill engine available"}
	for _, err := range []error{own, context.Canceled} {
		if got := sideError(RolePrefill, err); got != err {
			t.Errorf("sideError(%v) = %v, want it unchanged", err, got)
		}
	}
}

// TestPDPrefillChosenByPrefix: in a P/D pool the prefill engine is chosen
// by prefix (the same prompt's prefills stay on one producer) and the
// decode engine by load.
func TestPDPrefillChosenByPrefix(t *testing.T) {
	m := testmodel.Load(t, "qwen3")
	reg := enginesim.NewKVRegistry()
	p1, c1 := startSim(t, m, enginesim.Config{KVRole: enginesim.KVRoleProducer, KVRegistry: reg})
	p2, c2 := startSim(t, m, enginesim.Config{KVRole: enginesim.KVRoleProducer, KVRegistry: reg})
	d1, dc1 := startSim(t, m, enginesim.Config{KVRole: enginesim.KVRoleConsumer, KVRegistry: reg})
	d2, dc2 := startSim(t, m, enginesim.Config{KVRole: enginesim.KVRoleConsumer, KVRegistry: reg})
	r, err := NewRouter(RouterConfig{Policy: RoutingPrefix, Index: kvindex.New(kvindex.Config{Keyer: kvindex.NewKeyer(16, "qwen")})})
	if err != nil {
		t.Fatal(err)
	}
	h := HealthConfig{Interval: -1}
	pp, err := NewPool(PoolConfig{Role: RolePrefill, Health: h, Logger: quietLog(), Router: r}, c1, c2)
	if err != nil {
		t.Fatal(err)
	}
	dp, err := NewPool(PoolConfig{Role: RoleDecode, Health: h, Logger: quietLog()}, dc1, dc2)
	if err != nil {
		t.Fatal(err)
	}
	pd, err := NewPD(pp, dp, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		g := prompt(16*8+5, 100)
		g.SamplingParams = protocol.NewSamplingParams()
		call, err := pd.Start(context.Background(), g, "pd-"+strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		drain(t, call)
	}
	n1, n2 := len(p1.Requests()), len(p2.Requests())
	if n1+n2 != 4 || (n1 != 4 && n2 != 4) {
		t.Errorf("prefills of one prompt split %d/%d over the producers, want 4 on one", n1, n2)
	}
	if a, b := len(d1.Requests()), len(d2.Requests()); a != 2 || b != 2 {
		t.Errorf("decodes split %d/%d, want 2/2 (least outstanding, ties in turn)", a, b)
	}
}
