package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/vrender/vrender/kvindex"
	"github.com/vrender/vrender/orchestrator/engine"
	"github.com/vrender/vrender/protocol"
)

// prefillKVParams is what vLLM's disaggregation proxy
// (tests/v1/kv_connector/nixl_integration/toy_proxy_server.py) puts on the
// prefill request: compute the prompt's KV cache and keep it for a remote
// decode engine to pull.
var prefillKVParams = json.RawMessage(`{"do_remote_decode":true,"do_remote_prefill":false,` +
	`"remote_engine_id":null,"remote_block_ids":null,"remote_host":null,"remote_port":null}`)

// PDPool drives disaggregated serving as vLLM's proxy does: the request
// goes to a prefill engine (kv_producer) with max_tokens 1 and
// do_remote_decode, and then, with the kv_transfer_params that engine
// returns, to a decode engine (kv_consumer) whose stream the client gets.
// Each side is a balanced Pool. Loading the KV cache, and what happens when
// that fails, stays the engines' business (their kv_load_failure_policy).
type PDPool struct {
	prefill, decode *Pool
	log             *slog.Logger
}

// NewPD joins a prefill pool and a decode pool.
func NewPD(prefill, decode *Pool, log *slog.Logger) (*PDPool, error) {
	switch {
	case prefill == nil || decode == nil:
		return nil, errors.New("fleet: a P/D pool needs a prefill pool and a decode pool")
	case prefill.role != RolePrefill || decode.role != RoleDecode:
		return nil, fmt.Errorf("fleet: P/D pools have roles %q and %q, want %q and %q",
			prefill.role, decode.role, RolePrefill, RoleDecode)
	}
	if log == nil {
		log = slog.Default()
	}
	return &PDPool{prefill: prefill, decode: decode, log: log}, nil
}

// Start runs the prefill, then starts the decode stream. A failed prefill
// or decode is an *Error saying which side failed, with the engine's
// status mapped as for a collocated engine.
func (d *PDPool) Start(ctx context.Context, g *protocol.GenerateRequest, requestID string) (*Call, error) {
	return d.StartMM(ctx, g, requestID, nil)
}

// StartMM is Start for a prompt with multimodal items (Pool.StartMM): they
// key the prefill engine's choice. Both legs get the request's features
// whole, as vLLM's disaggregated serving sends the decode instance the full
// request (docs/routing.md, "Images").
func (d *PDPool) StartMM(ctx context.Context, g *protocol.GenerateRequest, requestID string, mm []kvindex.MMItem) (*Call, error) {
	pg := prefillRequest(g)
	began := time.Now()
	res, m, err := d.prefill.generate(ctx, &pg, requestID, mm)
	if err != nil {
		if ctx.Err() != nil && m != nil {
			d.abortPrefill(ctx, m.client, requestID)
		}
		return nil, sideError(RolePrefill, err)
	}
	kv := res.KVTransferParams
	if len(kv) == 0 || string(kv) == "null" {
		return nil, &Error{Status: http.StatusBadGateway, Type: http.StatusText(http.StatusBadGateway),
			Message: fmt.Sprintf("prefill engine %s answered without kv_transfer_params: "+
				"is it running with a KV connector as kv_producer?", m.client.URL())}
	}
	dg := *g
	dg.KVTransferParams = kv
	call, err := d.decode.StartMM(ctx, &dg, requestID, mm)
	if err != nil {
		return nil, sideError(RoleDecode, err)
	}
	d.log.DebugContext(ctx, "prefill done, decoding", "request_id", requestID, "prefill_engine", m.client.URL(),
		"decode_engine", call.Engine().URL(), "prefill_time", time.Since(began))
	return call, nil
}

// prefillRequest is g as the prefill engine gets it: one token, not
// streamed, no min_tokens (it could exceed max_tokens 1), and the
// do_remote_decode parameters.
func prefillRequest(g *protocol.GenerateRequest) protocol.GenerateRequest {
	pg := *g
	one := 1
	pg.SamplingParams.MaxTokens = &one
	pg.SamplingParams.ExplicitMaxTokens = true
	pg.SamplingParams.MinTokens = 0
	no := false
	pg.Stream = &no
	pg.StreamOptions = nil
	pg.KVTransferParams = prefillKVParams
	return pg
}

// abortPrefill stops a prefill whose client went away, so the engine does
// not finish it and hold its KV blocks for a decode that never comes.
func (d *PDPool) abortPrefill(ctx context.Context, c *engine.Client, requestID string) {
	if err := c.Abort(context.WithoutCancel(ctx), engine.EngineRequestID(requestID)); err != nil {
		d.log.WarnContext(ctx, "prefill abort failed", "request_id", requestID, "engine", c.URL(), "err", err)
	}
}

// Health is the prefill engines' state followed by the decode engines'.
func (d *PDPool) Health() []EngineHealth {
	return append(d.prefill.Health(), d.decode.Health()...)
}

// Run runs both pools' health checks until ctx is done.
func (d *PDPool) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { d.prefill.Run(ctx) })
	wg.Go(func() { d.decode.Run(ctx) })
	wg.Wait()
}
