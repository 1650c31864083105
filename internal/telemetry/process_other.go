//go:build !unix

package telemetry

import "time"

// processCPU is unavailable off unix; the metric is then omitted.
func processCPU() (time.Duration, bool) { return 0, false }
