package server

import (
	"context"
	"net/http"

	"github.com/vrender/vrender/orchestrator"
	"github.com/vrender/vrender/protocol"

	"github.com/vrender/vrender/responses"
)

// handleResponses answers POST /v1/responses through the orchestrator:
// vLLM's Responses endpoint (non-Harmony path) over a tokens-only engine.
// The body is read and converted as /v1/responses/render reads it.
func (s *server) handleResponses(w http.ResponseWriter, r *http.Request) {
	serveEngine(s, w, r, (*server).readResponsesRequest,
		func(ctx context.Context, req *responses.Request, sink orchestrator.Sink) (protocol.Appender, error) {
			return responses.Serve(ctx, s.orchestrator, req, sink)
		}, (*server).writeError)
}
