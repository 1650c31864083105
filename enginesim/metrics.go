package enginesim

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

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

// kvMetrics holds the NIXL figures; the zero value is ready to use.
type kvMetrics struct {
	mu                 sync.Mutex
	faults             KVFaults
	seen               int64 // decode requests with do_remote_prefill
	xferTime, xferSize histogram
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
		bytes := float64(len(req.TokenIDs) * kvBytesPerToken)
		m.xferTime.observe(xferTimeBuckets, 0.0005+bytes/20e9)
		m.xferSize.observe(xferByteBuckets, bytes)
	}
}

// handleMetrics is GET /metrics in Prometheus text format, with vLLM's
// per-engine labels.
func (s *Sim) handleMetrics(w http.ResponseWriter, r *http.Request) {
	labels := `engine="0",model_name=` + strconv.Quote(s.servedName)
	m := &s.kvm
	m.mu.Lock()
	xt, xs, failed, expired := m.xferTime.clone(), m.xferSize.clone(), m.failed, m.expired
	m.mu.Unlock()

	var b strings.Builder
	xt.write(&b, MetricXferTime, "Histogram of transfer duration for NIXL KV Cache transfers.", labels, xferTimeBuckets)
	xs.write(&b, MetricBytesTransferred, "Histogram of bytes transferred per NIXL KV Cache transfers.", labels, xferByteBuckets)
	writeCounter(&b, MetricFailedTransfers, "Number of failed NIXL KV Cache transfers.", labels, failed)
	writeCounter(&b, MetricFailedNotifs, "Number of failed NIXL KV Cache notifications.", labels, 0)
	writeCounter(&b, MetricKVExpiredReqs, "Number of requests that had their KV expire. "+
		"NOTE: This metric is tracked on the P instance.", labels, expired)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}

// histogram is a Prometheus histogram's state: per-bucket (non-cumulative)
// counts, then the +Inf overflow.
type histogram struct {
	counts []int64
	sum    float64
	count  int64
}

func (h *histogram) observe(bounds []float64, v float64) {
	if h.counts == nil {
		h.counts = make([]int64, len(bounds)+1)
	}
	i := 0
	for i < len(bounds) && v > bounds[i] {
		i++
	}
	h.counts[i]++
	h.sum += v
	h.count++
}

func (h histogram) clone() histogram {
	h.counts = append([]int64(nil), h.counts...)
	return h
}

func (h histogram) write(b *strings.Builder, name, help, labels string, bounds []float64) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name)
	var cum int64
	for i, le := range bounds {
		if h.counts != nil {
			cum += h.counts[i]
		}
		fmt.Fprintf(b, "%s_bucket{%s,le=%q} %d.0\n", name, labels, strconv.FormatFloat(le, 'g', -1, 64), cum)
	}
	fmt.Fprintf(b, "%s_bucket{%s,le=\"+Inf\"} %d.0\n", name, labels, h.count)
	fmt.Fprintf(b, "%s_count{%s} %d.0\n", name, labels, h.count)
	fmt.Fprintf(b, "%s_sum{%s} %s\n", name, labels, strconv.FormatFloat(h.sum, 'g', -1, 64))
}

func writeCounter(b *strings.Builder, name, help, labels string, v int64) {
	fmt.Fprintf(b, "# HELP %s_total %s\n# TYPE %s_total counter\n%s_total{%s} %d.0\n", name, help, name, name, labels, v)
}
