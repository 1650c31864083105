package orchestrator

import (
	"context"

	"github.com/vrender/vrender/fleet"
	"github.com/vrender/vrender/kvindex"
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
	// StartMM is Start for a prompt with images: their mm_hashes and
	// placeholder ranges in prompt order, which prefix routing folds into
	// the block keys as vLLM's prefix cache does.
	StartMM(ctx context.Context, g *protocol.GenerateRequest, requestID string, mm []kvindex.MMItem) (*fleet.Call, error)
	// Health is a snapshot of every engine's state.
	Health() []fleet.EngineHealth
}
