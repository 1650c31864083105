package fleet

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when any test leaves a goroutine behind,
// but for the one go-zeromq/zmq4 v0.17.0 keeps per closed PUB socket (its
// pubSocket.Close never stops the writer; see docs/routing.md).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/go-zeromq/zmq4.(*pubMWriter).run"))
}
