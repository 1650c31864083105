//go:build unix

package engine

import (
	"syscall"
	"time"
)

// processCPUTime is the CPU time the test process has used (all threads,
// GC included), so that benchmarks can report throughput per CPU-second
// even on a machine other work is loading.
func processCPUTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
