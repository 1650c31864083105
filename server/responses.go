package server

import (
	"net/http"

	"github.com/vrender/vrender/responses"
)

// handleResponses answers POST /v1/responses through the orchestrator:
// vLLM's Responses endpoint (non-Harmony path) over a tokens-only engine.
// The body is read and converted as /v1/responses/render reads it.
func (s *server) handleResponses(w http.ResponseWriter, r *http.Request) {
	req, ok := s.readResponsesRequest(w, r)
	if !ok {
		return
	}
	if s.orchestrator == nil {
		s.writeError(w, r, noEngine())
		return
	}
	sink := s.newSSESink(w, r)
	defer sink.close()
	res, err := responses.Serve(r.Context(), s.orchestrator, req, sink)
	if e := s.servedError(r, sink, err); e != nil {
		if ae := responsesError(err); ae != nil {
			e = ae
		}
		s.writeError(w, r, e)
		return
	}
	if err == nil && !sink.started && res != nil {
		s.writeJSON(w, r, http.StatusOK, res)
	}
}
