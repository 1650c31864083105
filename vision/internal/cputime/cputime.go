// Package cputime reads the CPU time the process has used, for benchmarks on shared machines: there
// wall time per operation measures the neighbours, CPU time measures the code.
package cputime

import (
	"syscall"
	"time"
)

// Process returns the user plus system CPU time of the whole process (GC workers included).
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
