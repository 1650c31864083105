package testenv

import (
	"testing"
	"time"

	"github.com/vrender/vrender/internal/telemetry"
)

// CPUTime returns the process's user plus system CPU time, which
// benchmarks report beside wall time (cpu-ns/op): on a shared machine
// wall time measures the neighbours too. Where the OS cannot say, the
// benchmark fails rather than report zeros as a measurement.
func CPUTime(tb testing.TB) time.Duration {
	tb.Helper()
	cpu, ok := telemetry.ProcessCPU()
	if !ok {
		tb.Fatal("testenv: process CPU time is unavailable on this OS")
	}
	return cpu
}
