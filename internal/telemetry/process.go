package telemetry

import (
	"io"
	"runtime"
	"runtime/metrics"
	"time"
)

// WriteProcess writes the standard process and Go runtime gauges a
// Prometheus client library exports: CPU seconds (the autoscaling signal
// that matches Kubernetes' own CPU metric), start time, goroutines, and
// heap allocations and GC cycles (what `vrender bench --http` reports per
// request).
func WriteProcess(w io.Writer, start time.Time) error {
	if cpu, ok := ProcessCPU(); ok {
		if err := WriteHeader(w, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds."); err != nil {
			return err
		}
		if err := WriteSample(w, "process_cpu_seconds_total", "", cpu.Seconds()); err != nil {
			return err
		}
	}
	if err := WriteHeader(w, "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds."); err != nil {
		return err
	}
	if err := WriteSample(w, "process_start_time_seconds", "", float64(start.UnixNano())/1e9); err != nil {
		return err
	}
	if err := WriteHeader(w, "go_goroutines", "gauge", "Number of goroutines that currently exist."); err != nil {
		return err
	}
	if err := WriteCount(w, "go_goroutines", "", int64(runtime.NumGoroutine()), StyleGo); err != nil {
		return err
	}
	// client_golang's names and meaning: mallocs count tiny allocations too.
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/tiny/allocs:objects"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	var v [3]uint64
	for i := range s {
		if s[i].Value.Kind() == metrics.KindUint64 {
			v[i] = s[i].Value.Uint64()
		}
	}
	if err := WriteHeader(w, "go_memstats_mallocs_total", "counter", "Total number of heap objects allocated, both live and gc-ed."); err != nil {
		return err
	}
	if err := WriteCount(w, "go_memstats_mallocs_total", "", int64(v[0]+v[1]), StyleGo); err != nil {
		return err
	}
	if err := WriteHeader(w, "go_gc_cycles_total", "counter", "Completed GC cycles."); err != nil {
		return err
	}
	return WriteCount(w, "go_gc_cycles_total", "", int64(v[2]), StyleGo)
}
