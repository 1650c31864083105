package server

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when any test leaves a goroutine behind: a
// stream, engine request or watchdog that outlives its request.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
