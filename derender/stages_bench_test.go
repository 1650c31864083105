package derender

import (
	"testing"

	"github.com/vrender/vrender/internal/telemetry"
)

// BenchmarkStagesOverhead is stream-echo at 1k tokens with and without the
// stage timers, to keep their cost per token visible.
func BenchmarkStagesOverhead(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			e, cr := benchEngine(b, 64)
			st := telemetry.NewStages()
			if on {
				e.SetStages(st)
			}
			ids := benchOutput(b, e.model, 1<<10)
			b.ResetTimer()
			for b.Loop() {
				streamOnce(b, e, cr, ids, echoAll)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(ids)), "ns/token")
			if on && st.Histogram(telemetry.StageParse).Count() == 0 {
				b.Fatal("stages on but nothing recorded")
			}
		})
	}
}
