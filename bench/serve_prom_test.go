package bench

import (
	"math"
	"testing"
)

const promBefore = `# HELP vrender_orchestrator_event_seconds Time from engine event read to client chunk flushed.
# TYPE vrender_orchestrator_event_seconds histogram
vrender_orchestrator_event_seconds_bucket{endpoint="chat",le="0.0001"} 10
vrender_orchestrator_event_seconds_bucket{endpoint="chat",le="0.0005"} 20
vrender_orchestrator_event_seconds_bucket{endpoint="chat",le="0.001"} 20
vrender_orchestrator_event_seconds_bucket{endpoint="chat",le="+Inf"} 20
vrender_orchestrator_event_seconds_sum{endpoint="chat"} 0.004
vrender_orchestrator_event_seconds_count{endpoint="chat"} 20
vrender_other_bucket{le="1"} 5
`

// After: the chat series gained 100 events (40 <= 0.1ms, 40 in (0.1, 0.5],
// 10 in (0.5, 1], 10 above 1ms); a second series adds 100 more in (0.1, 0.5].
const promAfter = `# TYPE vrender_orchestrator_event_seconds histogram
vrender_orchestrator_event_seconds_bucket{endpoint="chat",le="0.0001"} 50
vrender_orchestrator_event_seconds_bucket{endpoint="chat",le="0.0005"} 100
vrender_orchestrator_event_seconds_bucket{endpoint="chat",le="0.001"} 110
vrender_orchestrator_event_seconds_bucket{endpoint="chat",le="+Inf"} 120
vrender_orchestrator_event_seconds_sum{endpoint="chat"} 0.05
vrender_orchestrator_event_seconds_count{endpoint="chat"} 120
vrender_orchestrator_event_seconds_bucket{endpoint="completions",le="0.0001"} 0
vrender_orchestrator_event_seconds_bucket{endpoint="completions",le="0.0005"} 100
vrender_orchestrator_event_seconds_bucket{endpoint="completions",le="0.001"} 100
vrender_orchestrator_event_seconds_bucket{endpoint="completions",le="+Inf"} 100 1700000000000
vrender_orchestrator_event_seconds_sum{endpoint="completions"} 0.03
vrender_orchestrator_event_seconds_count{endpoint="completions"} 100
`

func TestHistogramParseSubQuantile(t *testing.T) {
	before, ok, err := ParseHistogram([]byte(promBefore), AddedLatencyMetric)
	if err != nil || !ok {
		t.Fatalf("parse before: ok %v err %v", ok, err)
	}
	after, _, err := ParseHistogram([]byte(promAfter), AddedLatencyMetric)
	if err != nil {
		t.Fatal(err)
	}
	d := after.Sub(before)
	if d.Count != 200 || !near(d.Sum, 0.076) || len(d.Buckets) != 4 {
		t.Fatalf("diff = %+v, want 200 events, sum 0.076, 4 buckets", d)
	}
	// Cumulative diff: <=0.1ms 40, <=0.5ms 180, <=1ms 190, +Inf 200.
	cases := []struct{ q, want float64 }{
		{0.10, 0.0001 * 20 / 40},               // rank 20 of 40 in [0, 0.1ms]
		{0.50, 0.0001 + 0.0004*(100-40)/140.0}, // rank 100 in (0.1, 0.5]ms
		{0.90, 0.0001 + 0.0004*(180-40)/140.0}, // rank 180: top of that bucket
		{0.94, 0.0005 + 0.0005*(188-180)/10.0}, // rank 188 in (0.5, 1]ms
		{0.99, 0.001},                          // rank 198 lies in +Inf: highest finite bound
		{0.0, 0},                               // rank 0: bottom of the first bucket
	}
	for _, tc := range cases {
		if got := d.Quantile(tc.q); !near(got, tc.want) {
			t.Errorf("Quantile(%g) = %g, want %g", tc.q, got, tc.want)
		}
	}
	if got := (Histogram{}).Quantile(0.5); !math.IsNaN(got) {
		t.Errorf("empty histogram quantile = %g, want NaN", got)
	}
	if _, ok, _ := ParseHistogram([]byte(promBefore), "vrender_missing"); ok {
		t.Error("found a histogram that is not there")
	}
	if _, _, err := ParseHistogram([]byte(`x_bucket{le="0.1" 3`), "x"); err == nil {
		t.Error("accepted unterminated labels")
	}
}
