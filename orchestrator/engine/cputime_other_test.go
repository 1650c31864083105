//go:build !unix

package engine

import "time"

func processCPUTime() (time.Duration, bool) { return 0, false }
