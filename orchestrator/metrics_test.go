package orchestrator

import (
	"strings"
	"testing"
)

func TestMetricsExposition(t *testing.T) {
	m := NewMetrics()
	m.Event.Observe(3000) // 3µs
	m.Event.Observe(2_000_000)
	m.requests[APIChat].Add(2)
	var b strings.Builder
	if err := m.WritePrometheus(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# TYPE vrender_orchestrator_event_seconds histogram",
		`vrender_orchestrator_event_seconds_bucket{le="5e-06"} 1`,
		`vrender_orchestrator_event_seconds_bucket{le="0.0025"} 2`,
		`vrender_orchestrator_event_seconds_bucket{le="+Inf"} 2`,
		"vrender_orchestrator_event_seconds_count 2",
		`vrender_orchestrator_requests_total{endpoint="chat"} 2`,
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
}
