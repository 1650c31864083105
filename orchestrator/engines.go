package orchestrator

import (
	"context"

	"github.com/vrender/vrender/fleet"
	"github.com/vrender/vrender/protocol"
)

// Engines is where the orchestrator's generate requests run: a collocated
// fleet.Pool or a prefill/decode fleet.PDPool. Start sends one engine
// request and returns its stream; Health is read by metrics and readiness
// code.
type Engines interface {
	// Start sends g (already prepared for the engine) under requestID and
	// returns the stream of the engine that holds the request. Errors are
	// classified by AsError.
	Start(ctx context.Context, g *protocol.GenerateRequest, requestID string) (*fleet.Call, error)
	// Health is a snapshot of every engine's state.
	Health() []fleet.EngineHealth
}
