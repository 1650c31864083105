package telemetry

import (
	"io"
	"runtime"
	"time"
)

// WriteProcess writes the standard process and Go runtime gauges a
// Prometheus client library exports: CPU seconds (the autoscaling signal
// that matches Kubernetes' own CPU metric), start time and goroutines.
func WriteProcess(w io.Writer, start time.Time) error {
	if cpu, ok := processCPU(); ok {
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
	return WriteSample(w, "go_goroutines", "", float64(runtime.NumGoroutine()))
}
