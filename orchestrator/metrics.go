package orchestrator

import (
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"
)

// eventBuckets are the upper bounds (seconds) of
// vrender_orchestrator_event_seconds: the time vrender adds per token is
// microseconds when healthy, so the buckets are fine below a millisecond.
var eventBuckets = []float64{
	0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005,
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1,
}

// Histogram is a fixed-bucket Prometheus histogram, lock-free.
type Histogram struct {
	bounds []float64
	counts []atomic.Int64 // one per bound, plus +Inf
	sumNS  atomic.Int64
	count  atomic.Int64
}

func newHistogram(bounds []float64) *Histogram {
	return &Histogram{bounds: bounds, counts: make([]atomic.Int64, len(bounds)+1)}
}

// Observe records one duration.
func (h *Histogram) Observe(d time.Duration) {
	s := d.Seconds()
	i := 0
	for i < len(h.bounds) && s > h.bounds[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sumNS.Add(int64(d))
	h.count.Add(1)
}

// Count is the number of observations.
func (h *Histogram) Count() int64 { return h.count.Load() }

// Quantile estimates the q-quantile from the buckets (the upper bound of
// the bucket holding it), for tests and logs.
func (h *Histogram) Quantile(q float64) float64 {
	total := h.count.Load()
	if total == 0 {
		return 0
	}
	rank := int64(q * float64(total))
	var seen int64
	for i := range h.counts {
		seen += h.counts[i].Load()
		if seen > rank {
			if i < len(h.bounds) {
				return h.bounds[i]
			}
			break
		}
	}
	return h.bounds[len(h.bounds)-1]
}

func (h *Histogram) write(w io.Writer, name, help string) error {
	if _, err := fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name); err != nil {
		return err
	}
	var cum int64
	for i, b := range h.bounds {
		cum += h.counts[i].Load()
		if _, err := fmt.Fprintf(w, "%s_bucket{le=\"%s\"} %d\n", name, strconv.FormatFloat(b, 'g', -1, 64), cum); err != nil {
			return err
		}
	}
	cum += h.counts[len(h.bounds)].Load()
	_, err := fmt.Fprintf(w, "%s_bucket{le=\"+Inf\"} %d\n%s_sum %s\n%s_count %d\n", name, cum,
		name, strconv.FormatFloat(float64(h.sumNS.Load())/1e9, 'g', -1, 64), name, cum)
	return err
}

// Metrics are the orchestrator's counters and the per-event latency
// histogram, exposed on GET /metrics.
type Metrics struct {
	// Event is the time from an engine SSE event being read to the client
	// chunk written and flushed: the latency vrender adds per token.
	Event *Histogram

	chatRequests, completionRequests atomic.Int64
	failed                           atomic.Int64
	// prompt and generated are token counts by endpoint (epChat,
	// epCompletions).
	prompt, generated [2]atomic.Int64
	chunks            atomic.Int64
	aborts            atomic.Int64
}

// Endpoint indexes of the per-endpoint token counters.
const (
	epChat = iota
	epCompletions
)

// Tokens reports prompt tokens sent to engines and generated tokens
// received from them, for chat and completions requests.
func (m *Metrics) Tokens() (chatPrompt, chatGenerated, completionsPrompt, completionsGenerated int64) {
	return m.prompt[epChat].Load(), m.generated[epChat].Load(),
		m.prompt[epCompletions].Load(), m.generated[epCompletions].Load()
}

// NewMetrics returns empty metrics.
func NewMetrics() *Metrics { return &Metrics{Event: newHistogram(eventBuckets)} }

// WritePrometheus writes the metrics in Prometheus text exposition format.
func (m *Metrics) WritePrometheus(w io.Writer) error {
	if err := m.Event.write(w, "vrender_orchestrator_event_seconds",
		"Time from an engine SSE event being read to the client chunk written and flushed."); err != nil {
		return err
	}
	counters := []struct {
		name, help, labels string
		v                  int64
	}{
		{"vrender_orchestrator_requests_total", "OpenAI requests served through an engine.", `{endpoint="chat"}`, m.chatRequests.Load()},
		{"vrender_orchestrator_requests_total", "", `{endpoint="completions"}`, m.completionRequests.Load()},
		{"vrender_orchestrator_failed_requests_total", "Requests that ended with an error.", "", m.failed.Load()},
		{"vrender_orchestrator_prompt_tokens_total", "Prompt tokens sent to engines.", "", m.prompt[epChat].Load() + m.prompt[epCompletions].Load()},
		{"vrender_orchestrator_generation_tokens_total", "Completion tokens received from engines.", "", m.generated[epChat].Load() + m.generated[epCompletions].Load()},
		{"vrender_orchestrator_stream_chunks_total", "SSE chunks written to clients.", "", m.chunks.Load()},
		{"vrender_orchestrator_engine_aborts_total", "Engine requests aborted (client gone or stop string).", "", m.aborts.Load()},
	}
	for _, c := range counters {
		if c.help != "" {
			if _, err := fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n", c.name, c.help, c.name); err != nil {
				return err
			}
		}
		if _, err := fmt.Fprintf(w, "%s%s %d\n", c.name, c.labels, c.v); err != nil {
			return err
		}
	}
	return nil
}
