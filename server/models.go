package server

import (
	"net/http"
	"slices"

	"github.com/vrender/vrender/protocol"
)

// handleModels answers GET /v1/models with one card per served name, as
// vLLM lists its base model paths.
func (s *server) handleModels(w http.ResponseWriter, r *http.Request) {
	now := s.now()
	cards := make([]protocol.ModelCard, 0, len(s.servedNames))
	for _, name := range s.servedNames {
		cards = append(cards, protocol.NewModelCard(name, s.modelPath, s.model.MaxModelLen, now))
	}
	s.writeJSON(w, r, http.StatusOK, protocol.NewModelList(cards))
}

// checkModel accepts a request's "model" when it is absent, null or empty
// (the served model is meant) or one of the served names.
func (s *server) checkModel(name *string) *apiError {
	if name == nil || *name == "" || slices.Contains(s.servedNames, *name) {
		return nil
	}
	return notFoundModel(*name)
}
