package server

import (
	"bytes"
	"io"
	"net/http"
	"strconv"

	"github.com/vrender/vrender/internal/membudget"
	"github.com/vrender/vrender/internal/telemetry"
)

// handleMetrics answers GET /metrics in Prometheus text exposition format
// (version 0.0.4). docs/metrics.md describes every metric and which ones
// to autoscale on.
func (s *server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	var b bytes.Buffer
	if err := s.writeMetrics(&b); err != nil {
		s.log.ErrorContext(r.Context(), "write metrics", "request_id", requestIDFrom(r.Context()), "err", err)
		s.writeError(w, r, internalError())
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b.Bytes())
}

// metricWriter writes families, remembering the first error so that the
// many writes read as a list.
type metricWriter struct {
	w   io.Writer
	err error
}

func (m *metricWriter) header(name, typ, help string) {
	if m.err == nil {
		m.err = telemetry.WriteHeader(m.w, name, typ, help)
	}
}

// sample writes an integer sample as an integer: through a float64 'g'
// format a count of a million read "1e+06".
func (m *metricWriter) sample(name, labels string, v int64) {
	if m.err == nil {
		m.err = telemetry.WriteCount(m.w, name, labels, v, telemetry.StyleGo)
	}
}

func (m *metricWriter) single(name, typ, help string, v int64) {
	m.header(name, typ, help)
	m.sample(name, "", v)
}

func (s *server) writeMetrics(w io.Writer) error {
	m := &metricWriter{w: w}
	sm := &s.metrics

	m.header("vrender_requests_total", "counter", "HTTP requests finished, by endpoint and status code.")
	for ep := range numEndpoints {
		for i := range sm.requests[ep] {
			if v := sm.requests[ep][i].Load(); v != 0 {
				m.sample("vrender_requests_total", telemetry.Label("endpoint", endpointPaths[ep])+","+
					telemetry.Label("code", strconv.Itoa(i+minCode)), v)
			}
		}
	}
	m.single("vrender_inflight_requests", "gauge", "HTTP requests being served now (streams included).", sm.inflightRequests.Load())
	m.single("vrender_inflight_streams", "gauge",
		"Streaming (SSE) chat and completions responses being written now: the per-pod autoscaling signal.", sm.inflightStreams.Load())
	m.single("vrender_unauthorized_requests_total", "counter", "Requests refused with 401 for a missing or wrong API key.", sm.unauthorized.Load())
	m.single("vrender_limited_requests_total", "counter", "Requests refused by a body size or field count limit (413/400).", sm.limited.Load())
	draining := int64(0)
	if s.draining.Load() {
		draining = 1
	}
	m.single("vrender_draining", "gauge", "1 while the server drains for shutdown (/health answers 503).", draining)

	prompt, generated := s.tokenCounts()
	m.header("vrender_prompt_tokens_total", "counter", "Prompt tokens processed, by endpoint (tokenized, rendered, or sent to engines).")
	for ep := range numEndpoints {
		if prompt[ep] != 0 {
			m.sample("vrender_prompt_tokens_total", telemetry.Label("endpoint", endpointPaths[ep]), prompt[ep])
		}
	}
	m.header("vrender_generation_tokens_total", "counter", "Generated tokens processed, by endpoint (derendered, detokenized, or streamed from engines).")
	for ep := range numEndpoints {
		if generated[ep] != 0 {
			m.sample("vrender_generation_tokens_total", telemetry.Label("endpoint", endpointPaths[ep]), generated[ep])
		}
	}

	hits, misses := s.derender.CacheStats()
	m.single("vrender_derender_cache_hits_total", "counter", "Streaming derender calls that resumed a cached parser state.", hits)
	m.single("vrender_derender_cache_misses_total", "counter", "Streaming derender calls that replayed the history.", misses)
	ckHits, ckRestores := s.derender.CheckpointStats()
	m.single("vrender_derender_checkpoint_hits_total", "counter",
		"Checkpoint resumes whose live state was cached in this process.", ckHits)
	m.single("vrender_derender_checkpoint_restores_total", "counter",
		"Checkpoint resumes rebuilt from the signed checkpoint (another replica issued it, or it was evicted).", ckRestores)
	rcHits, rcMisses := s.derender.RequestCacheStats()
	m.single("vrender_derender_request_cache_hits_total", "counter",
		"Streaming chat derender calls whose chat_request was found decoded in the cache.", rcHits)
	m.single("vrender_derender_request_cache_misses_total", "counter",
		"Streaming chat derender calls that decoded their chat_request.", rcMisses)
	tHits, tMisses := s.generator.Renderer().TemplateCacheStats()
	m.single("vrender_template_cache_hits_total", "counter", "Request-supplied chat templates found compiled in the cache.", tHits)
	m.single("vrender_template_cache_misses_total", "counter", "Request-supplied chat templates compiled.", tMisses)
	ic := s.generator.Renderer().ImageCacheStats()
	m.single("vrender_image_cache_hits_total", "counter",
		"Images whose processed output was found in the processed-image cache (or shared with a concurrent identical miss).", ic.Hits)
	m.single("vrender_image_cache_misses_total", "counter", "Images decoded and processed with the processed-image cache on.", ic.Misses)
	m.single("vrender_image_cache_evictions_total", "counter", "Processed images dropped to keep the cache within --mm-processor-cache-gb.", ic.Evictions)
	m.single("vrender_image_cache_bytes", "gauge", "Bytes the processed-image cache holds (pixel values plus a fixed overhead per entry).", ic.Bytes)
	m.single("vrender_image_cache_entries", "gauge", "Processed images the cache holds.", ic.Entries)
	tc := s.model.Tokenizer.SegmentCacheStats()
	m.single("vrender_tokenizer_cache_hits_total", "counter",
		"Text segments between special tokens whose token ids were found in the tokenizer cache.", tc.Hits)
	m.single("vrender_tokenizer_cache_misses_total", "counter",
		"Text segments between special tokens not found in the tokenizer cache (stored on their second miss, or their first in a text mostly found there).", tc.Misses)
	m.single("vrender_tokenizer_cache_bytes", "gauge", "Approximate bytes held by the tokenizer cache.", tc.Bytes)
	if b := s.generator.Renderer().ImageBudget(); b != nil {
		writeImageBudget(m, b)
	}
	if m.err != nil {
		return m.err
	}

	if err := s.stages.WritePrometheus(w); err != nil {
		return err
	}
	if s.orchestrator != nil {
		if err := s.writeEngineHealth(m); err != nil {
			return err
		}
		if err := s.orchestrator.Metrics().WritePrometheus(w); err != nil {
			return err
		}
	}
	return telemetry.WriteProcess(w, s.started)
}

// tokenCounts merges the server's per-endpoint token counts with the
// orchestrator's.
func (s *server) tokenCounts() (prompt, generated [numEndpoints]int64) {
	for ep := range numEndpoints {
		prompt[ep] = s.metrics.prompt[ep].Load()
		generated[ep] = s.metrics.generated[ep].Load()
	}
	if s.orchestrator != nil {
		cp, cg, op, og := s.orchestrator.Metrics().Tokens()
		prompt[epChat] += cp
		generated[epChat] += cg
		prompt[epCompletion] += op
		generated[epCompletion] += og
		mp, mg, rp, rg := s.orchestrator.Metrics().APITokens()
		prompt[epMessages] += mp
		generated[epMessages] += mg
		prompt[epResponses] += rp
		generated[epResponses] += rg
	}
	return prompt, generated
}

// writeEngineHealth writes the engine pools' state.
func (s *server) writeEngineHealth(m *metricWriter) error {
	health := s.orchestrator.EngineHealth()
	labels := make([]string, len(health))
	for i, h := range health {
		labels[i] = telemetry.Label("engine", h.URL) + "," + telemetry.Label("role", h.Role)
	}
	m.header("vrender_engine_healthy", "gauge", "1 while the engine is in its pool, 0 while it is ejected.")
	for i, h := range health {
		v := int64(0)
		if h.Healthy {
			v = 1
		}
		m.sample("vrender_engine_healthy", labels[i], v)
	}
	m.header("vrender_engine_outstanding_requests", "gauge", "Requests the engine holds now (the balancer's load figure).")
	for i, h := range health {
		m.sample("vrender_engine_outstanding_requests", labels[i], h.Outstanding)
	}
	// The engines' own queues, for those whose /metrics was scraped
	// (serve --engine-metrics-interval).
	m.header("vrender_engine_queue_waiting_requests", "gauge", "The engine's vllm:num_requests_waiting at its last metrics scrape.")
	for i, h := range health {
		if h.QueueKnown {
			m.sample("vrender_engine_queue_waiting_requests", labels[i], h.QueueWaiting)
		}
	}
	m.header("vrender_engine_queue_running_requests", "gauge", "The engine's vllm:num_requests_running at its last metrics scrape.")
	for i, h := range health {
		if h.QueueKnown {
			m.sample("vrender_engine_queue_running_requests", labels[i], h.QueueRunning)
		}
	}
	m.header("vrender_engine_ejections_total", "counter", "Times the engine was ejected from its pool.")
	for i, h := range health {
		m.sample("vrender_engine_ejections_total", labels[i], h.Ejections)
	}
	m.header("vrender_engine_null_items_total", "counter",
		"Multimodal items sent to the engine as null kwargs, for its item cache to fill (--engine-mm-cache-gb).")
	for i, h := range health {
		m.sample("vrender_engine_null_items_total", labels[i], h.Items.Null)
	}
	m.header("vrender_engine_item_resends_total", "counter",
		"Requests the engine failed for lacking an item sent as null, sent again with the items' data.")
	for i, h := range health {
		m.sample("vrender_engine_item_resends_total", labels[i], h.Items.Resends)
	}
	m.header("vrender_engine_pool_fail_open_total", "counter",
		"Ejections a pool declined because the failing engine was its last admitted one.")
	seen := map[string]bool{}
	for _, h := range health {
		if !seen[h.Role] {
			seen[h.Role] = true
			m.sample("vrender_engine_pool_fail_open_total", telemetry.Label("role", h.Role), h.FailOpen)
		}
	}
	return m.err
}

// writeImageBudget writes the image memory budget's state
// (--image-memory-budget): what requests hold and how long they queue.
func writeImageBudget(m *metricWriter, b *membudget.Budget) {
	st := b.Stats()
	m.single("vrender_image_budget_bytes", "gauge", "The image memory budget (--image-memory-budget).", st.Capacity)
	m.single("vrender_image_budget_in_use_bytes", "gauge",
		"Bytes of the image memory budget reserved by requests now (their images' decoded pixels, pixel_values and features, sized from the headers).", st.InUse)
	m.single("vrender_image_budget_waiting_requests", "gauge", "Requests waiting for image memory budget to process their images.", st.Waiting)
	m.single("vrender_image_budget_refused_total", "counter",
		"Requests refused with 413 because their images need more memory than the whole budget.", st.Refused)
	m.header("vrender_image_budget_wait_seconds", "histogram",
		"Time requests with images waited for image memory budget (0 when it was free; a request that went away counts the time it waited).")
	if m.err == nil {
		m.err = b.WaitHistogram().WriteSeries(m.w, "vrender_image_budget_wait_seconds", "")
	}
}
