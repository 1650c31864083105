//go:build !unix

package telemetry

import "time"

// ProcessCPU is unavailable off unix; the metric is then omitted.
func ProcessCPU() (time.Duration, bool) { return 0, false }
