package orchestrator

import (
	"io"
	"sync/atomic"

	"github.com/vrender/vrender/fleet"
	"github.com/vrender/vrender/internal/telemetry"
)

// eventBuckets are the upper bounds (seconds) of
// vrender_orchestrator_event_seconds: the time vrender adds per token is
// microseconds when healthy, so the buckets are fine below a millisecond.
var eventBuckets = []float64{
	0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005,
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1,
}

// Metrics are the orchestrator's counters and the per-event latency
// histogram, exposed on GET /metrics.
type Metrics struct {
	// Event is the time from an engine SSE event being read to the client
	// chunk written and flushed: the latency vrender adds per token.
	Event *telemetry.Histogram

	// requests, prompt and generated count requests and tokens by API.
	requests, prompt, generated [numAPIs]atomic.Int64
	failed                      atomic.Int64
	chunks                      atomic.Int64
	aborts                      atomic.Int64
	router                      *fleet.Router // its figures follow these; nil when none
}

// API is the front end a request came through: its requests and tokens
// are counted under its name (the endpoint label of docs/metrics.md).
type API int

// The APIs, in the order of the metrics' series.
const (
	APIChat API = iota
	APICompletions
	APIMessages
	APIResponses
	numAPIs
)

// apiNames are the endpoint label values.
var apiNames = [numAPIs]string{"chat", "completions", "messages", "responses"}

// Tokens reports prompt tokens sent to engines and generated tokens
// received from them, for chat and completions requests.
func (m *Metrics) Tokens() (chatPrompt, chatGenerated, completionsPrompt, completionsGenerated int64) {
	return m.prompt[APIChat].Load(), m.generated[APIChat].Load(),
		m.prompt[APICompletions].Load(), m.generated[APICompletions].Load()
}

// APITokens reports the same for /v1/messages and /v1/responses requests.
func (m *Metrics) APITokens() (messagesPrompt, messagesGenerated, responsesPrompt, responsesGenerated int64) {
	return m.prompt[APIMessages].Load(), m.generated[APIMessages].Load(),
		m.prompt[APIResponses].Load(), m.generated[APIResponses].Load()
}

// NewMetrics returns empty metrics.
func NewMetrics() *Metrics { return &Metrics{Event: telemetry.NewHistogram(eventBuckets)} }

// WritePrometheus writes the metrics in Prometheus text exposition format.
func (m *Metrics) WritePrometheus(w io.Writer) error {
	const event = "vrender_orchestrator_event_seconds"
	if err := telemetry.WriteHeader(w, event, "histogram",
		"Time from an engine SSE event being read to the client chunk written and flushed."); err != nil {
		return err
	}
	if err := m.Event.WriteSeries(w, event, ""); err != nil {
		return err
	}
	type counter struct {
		name, help, labels string
		v                  int64
	}
	var counters []counter
	for api, name := range apiNames {
		help := ""
		if api == 0 {
			help = "OpenAI requests served through an engine."
		}
		counters = append(counters, counter{"vrender_orchestrator_requests_total", help, telemetry.Label("endpoint", name), m.requests[api].Load()})
	}
	counters = append(counters, []counter{
		{"vrender_orchestrator_failed_requests_total", "Requests that ended with an error.", "", m.failed.Load()},
		{"vrender_orchestrator_prompt_tokens_total", "Prompt tokens sent to engines.", "", sum(&m.prompt)},
		{"vrender_orchestrator_generation_tokens_total", "Completion tokens received from engines.", "", sum(&m.generated)},
		{"vrender_orchestrator_stream_chunks_total", "SSE chunks written to clients.", "", m.chunks.Load()},
		{"vrender_orchestrator_engine_aborts_total", "Engine requests aborted (client gone or stop string).", "", m.aborts.Load()},
	}...)
	for _, c := range counters {
		if c.help != "" {
			if err := telemetry.WriteHeader(w, c.name, "counter", c.help); err != nil {
				return err
			}
		}
		if err := telemetry.WriteCount(w, c.name, c.labels, c.v, telemetry.StyleGo); err != nil {
			return err
		}
	}
	if m.router != nil {
		return m.router.WritePrometheus(w)
	}
	return nil
}

func sum(counts *[numAPIs]atomic.Int64) int64 {
	var n int64
	for i := range counts {
		n += counts[i].Load()
	}
	return n
}
