package preflight

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vrender/vrender/protocol"
)

// NIXL KV-transfer metrics as vLLM's NixlConnector names them
// (nixl_connector.py, NixlPromMetrics). vLLM counts expired leases on the
// prefill instance and transfers on the decode instance that reads.
const (
	metricXferTime        = "vllm:nixl_xfer_time_seconds"
	metricFailedTransfers = "vllm:nixl_num_failed_transfers"
	metricKVExpiredReqs   = "vllm:nixl_num_kv_expired_reqs"
)

// filler is repeated to grow a long prompt; it tokenizes to the same
// tokens at every repetition in common BPE vocabularies.
const filler = "The engines pass the cache along and the decoder reads every block in order. "

// longOutputTokens keeps the long prompts about prefill and transfer, not
// generation.
const longOutputTokens = 8

// kvFigures are the NIXL figures summed over the engines that export them.
type kvFigures struct {
	transfers, xferSeconds, failed, expired float64
	hasXfer                                 bool
}

// scrapeKV reads the NIXL metrics of every engine. The decode engine (the
// reader) must export the transfer histogram.
func (r *runner) scrapeKV(ctx context.Context) (kvFigures, error) {
	var f kvFigures
	for _, t := range r.engines {
		body, err := r.get(ctx, t, "/metrics")
		if err != nil {
			return f, fmt.Errorf("%s engine: %w", t.role, err)
		}
		m, err := ParseMetrics(bytes.NewReader(body))
		if err != nil {
			return f, fmt.Errorf("%s engine /metrics: %w", t.role, err)
		}
		if n, s, ok := m.Histogram(metricXferTime); ok {
			f.transfers += n
			f.xferSeconds += s
			if t == r.gen {
				f.hasXfer = true
			}
		}
		if v, ok := m.Counter(metricFailedTransfers); ok {
			f.failed += v
		}
		if v, ok := m.Counter(metricKVExpiredReqs); ok {
			f.expired += v
		}
	}
	return f, nil
}

// checkLongPrompts sends the long prompts one at a time and, with a
// prefill/decode pair, compares the NIXL metrics before and after.
func (r *runner) checkLongPrompts(ctx context.Context) []Check {
	const name, kvName = "long prompts", "KV transfer (NIXL metrics)"
	n, tokens := r.cfg.LongPrompts, r.cfg.LongPromptTokens
	if n == 0 {
		return []Check{{Name: name, Status: StatusSkip, Detail: "--long-prompts 0"}}
	}
	var before kvFigures
	if r.prefill != nil {
		var err error
		if before, err = r.scrapeKV(ctx); err != nil {
			return []Check{fail(kvName, "cannot read /metrics: "+err.Error(),
				"vLLM serves Prometheus metrics on GET /metrics of the API port: make it reachable from here")}
		}
		if !before.hasXfer {
			return []Check{fail(kvName, "the decode engine's /metrics has no "+metricXferTime,
				`run both engines with the NIXL connector (--kv-transfer-config '{"kv_connector":"NixlConnector",`+
					`"kv_role":"kv_both"}') and without --disable-log-stats: vrender reads the KV-transfer figures from it`)}
		}
	}

	reps, err := r.fillerReps(ctx, tokens)
	if err != nil {
		return []Check{failLong(name, "sizing the long prompt", err)}
	}
	var total time.Duration
	var promptTokens int
	for i := range n {
		id := protocol.RandomUUID()
		// A unique head defeats the prefix cache, so every prompt is
		// prefilled and transferred in full.
		content := "Preflight document " + id + ".\n" + strings.Repeat(filler, reps)
		x, err := r.roundTrip(ctx, "preflight-long-"+id, content, longOutputTokens)
		if err != nil {
			return []Check{failLong(name, fmt.Sprintf("long prompt %d of %d", i+1, n), err)}
		}
		total += x.elapsed
		promptTokens = x.promptTokens
	}
	checks := []Check{pass(name, fmt.Sprintf("%d × %d prompt tokens, one at a time, %s each on average",
		n, promptTokens, (total/time.Duration(n)).Round(time.Millisecond)),
		map[string]float64{"prompts": float64(n), "prompt_tokens": float64(promptTokens),
			"avg_seconds": (total / time.Duration(n)).Seconds()})}

	if r.prefill == nil {
		return append(checks, Check{Name: kvName, Status: StatusSkip,
			Detail: "collocated engine: no KV transfer to measure"})
	}
	after, err := r.scrapeKV(ctx)
	if err != nil {
		return append(checks, fail(kvName, "cannot read /metrics after the long prompts: "+err.Error(),
			"check that the engines are still running"))
	}
	return append(checks, kvCheck(kvName, n, before, after))
}

// kvCheck judges the NIXL deltas the long prompts caused.
func kvCheck(name string, prompts int, before, after kvFigures) Check {
	transfers := after.transfers - before.transfers
	expired := after.expired - before.expired
	failed := after.failed - before.failed
	avg := 0.0
	if transfers > 0 {
		avg = (after.xferSeconds - before.xferSeconds) / transfers
	}
	figs := map[string]float64{"transfers": transfers, "avg_transfer_seconds": avg,
		"expired_reqs": expired, "failed_transfers": failed}
	detail := fmt.Sprintf("%g transfers, average %.3f ms, expired leases +%g, failed transfers +%g",
		transfers, avg*1e3, expired, failed)
	var c Check
	switch {
	case expired > 0:
		c = fail(name, detail, "KV leases expired before decode read them: raise the prefill engine's lease "+
			"(VLLM_NIXL_ABORT_REQUEST_TIMEOUT, or kv_lease_duration in its kv_connector_extra_config) "+
			"or add decode capacity so transfers start sooner")
	case failed > 0:
		c = fail(name, detail, "NIXL transfers failed: check the transport between the engines "+
			"(UCX devices, the side channel VLLM_NIXL_SIDE_CHANNEL_HOST/PORT reachable from decode) and the engines' logs")
	case transfers < float64(prompts):
		c = fail(name, fmt.Sprintf("%s for %d long prompts", detail, prompts),
			"the decode engine did not read the prompts' KV cache: run it with the NIXL connector "+
				"(kv_role kv_consumer or kv_both) and give vrender the decode engine as --decode-engine")
	default:
		c = pass(name, detail, nil)
	}
	c.Figures = figs
	return c
}

func failLong(name, what string, err error) Check {
	var se *stageError
	if errors.As(err, &se) {
		fix := se.fix
		if se.stage == "render" {
			fix = "lower --long-prompt-tokens to fit the model's context (--max-model-len)"
		}
		return fail(name, fmt.Sprintf("%s: %s failed: %v", what, se.stage, se.err), fix)
	}
	return fail(name, what+": "+err.Error(), "see the error above")
}

// fillerReps finds how many filler repetitions make a rendered prompt of
// about want tokens, from the token counts of two renders.
func (r *runner) fillerReps(ctx context.Context, want int) (int, error) {
	const probe = 32
	l0, err := r.renderedLen(ctx, "Preflight document "+protocol.RandomUUID()+".\n")
	if err != nil {
		return 0, err
	}
	l1, err := r.renderedLen(ctx, "Preflight document "+protocol.RandomUUID()+".\n"+strings.Repeat(filler, probe))
	if err != nil {
		return 0, err
	}
	per := float64(l1-l0) / probe
	if per <= 0 {
		return 0, fmt.Errorf("filler adds no tokens")
	}
	return max(1, int(float64(want-l0)/per+0.5)), nil
}

func (r *runner) renderedLen(ctx context.Context, content string) (int, error) {
	body := []byte(`{"model":` + quoteJSON(r.cfg.ModelName) + `,"messages":[{"role":"user","content":` +
		quoteJSON(content) + `}],"max_tokens":1}`)
	chat, err := protocol.DecodeChatCompletionRequest(body)
	if err != nil {
		return 0, err
	}
	res, err := r.cfg.Generator.RenderChat(ctx, chat)
	if err != nil {
		return 0, &stageError{"render", "", err}
	}
	return len(res.Request.TokenIDs), nil
}
