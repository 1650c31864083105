//go:build unix

package parsers

import (
	"syscall"
	"time"
)

// processCPU is the process's user plus system CPU time: on a shared
// machine wall time measures the neighbours too.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
