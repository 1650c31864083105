package enginesim

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/vrender/vrender/internal/telemetry"
	"github.com/vrender/vrender/protocol"
)

// The KV-transfer metrics vLLM's NixlConnector exports on an engine's
// /metrics (vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py,
// NixlPromMetrics). Counters are written with prometheus_client's _total
// suffix, as vLLM's endpoint shows them.
const (
	MetricXferTime         = "vllm:nixl_xfer_time_seconds"
	MetricBytesTransferred = "vllm:nixl_bytes_transferred"
	MetricFailedTransfers  = "vllm:nixl_num_failed_transfers"
	MetricFailedNotifs     = "vllm:nixl_num_failed_notifications"
	MetricKVExpiredReqs    = "vllm:nixl_num_kv_expired_reqs"
)

// Prefix-cache metrics as vLLM's v1 PrometheusStatLogger names them (in
// tokens), vLLM's prompt token counter, and the sim's own request count.
const (
	MetricPrefixCacheQueries = "vllm:prefix_cache_queries"
	MetricPrefixCacheHits    = "vllm:prefix_cache_hits"
	MetricPromptTokens       = "vllm:prompt_tokens"
	MetricSimRequests        = "enginesim_requests"
)

// vLLM's scheduler gauges (vllm/v1/metrics/loggers.py).
const (
	MetricRequestsRunning = "vllm:num_requests_running"
	MetricRequestsWaiting = "vllm:num_requests_waiting"
)

// kvBytesPerToken sizes a simulated transfer: K and V for an 8B model with
// 36 layers, 8 KV heads of 128 dims in bf16 (36*8*128*2*2 bytes).
const kvBytesPerToken = 147456

var (
	xferTimeBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}
	xferByteBuckets = []float64{1 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30, 4 << 30}
)

// KVFaults makes the simulated connector report transfer trouble on
// /metrics. The sim keeps generating as if the KV cache had been recomputed
// (vLLM's kv_load_failure_policy=recompute), so only the counters show it.
type KVFaults struct {
	// ExpireEvery counts every Nth transfer as a request whose KV lease
	// expired before the decode engine read it (0: never). vLLM counts
	// expiries on the prefill instance; the sim counts them where the
	// transfer lands, so a single sim shows both sides.
	ExpireEvery int
	// FailEvery counts every Nth transfer as a failed transfer (0: never).
	FailEvery int
}

// kvMetrics holds the NIXL figures; New fills in the histograms.
type kvMetrics struct {
	mu                 sync.Mutex
	faults             KVFaults
	seen               int64 // decode requests with do_remote_prefill
	xferTime, xferSize *telemetry.Histogram
	failed, expired    int64
}

// SetKVFaults changes which simulated KV transfers count as expired or
// failed from now on.
func (s *Sim) SetKVFaults(f KVFaults) {
	s.kvm.mu.Lock()
	defer s.kvm.mu.Unlock()
	s.kvm.faults = f
}

// observeKV records the KV transfer a decode request implies: one with
// kv_transfer_params.do_remote_prefill pulls its prompt's KV cache from the
// prefill engine before generating.
func (s *Sim) observeKV(req *protocol.GenerateRequest) {
	if _, remotePrefill := kvFlags(req.KVTransferParams); !remotePrefill {
		return
	}
	m := &s.kvm
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seen++
	switch {
	case m.faults.ExpireEvery > 0 && m.seen%int64(m.faults.ExpireEvery) == 0:
		m.expired++
	case m.faults.FailEvery > 0 && m.seen%int64(m.faults.FailEvery) == 0:
		m.failed++
	default:
		// A made-up but plausible RDMA figure: 0.5 ms setup, 20 GB/s.
		bytes := int64(len(req.TokenIDs) * kvBytesPerToken)
		m.xferTime.Observe(500*time.Microsecond + time.Duration(bytes/20)) // 20 bytes per ns
		m.xferSize.ObserveValue(bytes)
	}
}

// handleMetrics is GET /metrics in Prometheus text format, with vLLM's
// per-engine labels.
func (s *Sim) handleMetrics(w http.ResponseWriter, r *http.Request) {
	labels := `engine="0",` + telemetry.Label("model_name", s.servedName)
	m := &s.kvm
	// The lock makes the scrape one consistent snapshot of the transfers.
	m.mu.Lock()
	var b strings.Builder
	writeHistogram(&b, m.xferTime, MetricXferTime, "Histogram of transfer duration for NIXL KV Cache transfers.", labels)
	writeHistogram(&b, m.xferSize, MetricBytesTransferred, "Histogram of bytes transferred per NIXL KV Cache transfers.", labels)
	writeCounter(&b, MetricFailedTransfers, "Number of failed NIXL KV Cache transfers.", labels, m.failed)
	writeCounter(&b, MetricFailedNotifs, "Number of failed NIXL KV Cache notifications.", labels, 0)
	writeCounter(&b, MetricKVExpiredReqs, "Number of requests that had their KV expire. "+
		"NOTE: This metric is tracked on the P instance.", labels, m.expired)
	m.mu.Unlock()
	if s.cache != nil {
		q, h := s.cache.stats()
		writeCounter(&b, MetricPrefixCacheQueries, "Prefix cache queries, in terms of number of queried tokens.", labels, q)
		writeCounter(&b, MetricPrefixCacheHits, "Prefix cache hits, in terms of number of cached tokens.", labels, h)
	}
	writeGauge(&b, MetricRequestsRunning, "Number of requests in model execution batches.", labels, s.queue.running.Load())
	writeGauge(&b, MetricRequestsWaiting, "Number of requests waiting to be processed.", labels, s.queue.waiting.Load())
	writeCounter(&b, MetricPromptTokens, "Number of prefill tokens processed.", labels, s.promptTokens.Load())
	writeCounter(&b, MetricSimRequests, "Generate requests the simulated engine accepted.", labels, s.accepted.Load())
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}

// writeHistogram and writeCounter spell values as vLLM's prometheus_client
// does ("2.0"); a strings.Builder never fails a write.
func writeHistogram(b *strings.Builder, h *telemetry.Histogram, name, help, labels string) {
	_ = telemetry.WriteHeader(b, name, "histogram", help)
	_ = h.WriteSeriesStyle(b, name, labels, telemetry.StylePython)
}

// writeGauge writes a gauge as prometheus_client does.
func writeGauge(b *strings.Builder, name, help, labels string, v int64) {
	_ = telemetry.WriteHeader(b, name, "gauge", help)
	_ = telemetry.WriteCount(b, name, labels, v, telemetry.StylePython)
}

// writeCounter writes a counter with prometheus_client's _total suffix.
func writeCounter(b *strings.Builder, name, help, labels string, v int64) {
	_ = telemetry.WriteHeader(b, name+"_total", "counter", help)
	_ = telemetry.WriteCount(b, name+"_total", labels, v, telemetry.StylePython)
}
