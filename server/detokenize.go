package server

import (
	"errors"
	"net/http"

	"github.com/vrender/vrender/internal/telemetry"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/protocol"
)

// handleDetokenize answers POST /detokenize. Like vLLM it decodes with
// special tokens kept.
func (s *server) handleDetokenize(w http.ResponseWriter, r *http.Request) {
	body, e := s.readJSONBody(w, r)
	if e != nil {
		s.writeError(w, r, e)
		return
	}
	req, err := protocol.DecodeDetokenizeRequest(body)
	if err != nil {
		s.writeError(w, r, decodeError(err))
		return
	}
	if e := s.checkModel(req.Model); e != nil {
		s.writeError(w, r, e)
		return
	}
	if e := s.checkDerenderTokens(len(req.Tokens)); e != nil {
		s.writeError(w, r, e)
		return
	}
	_, span := s.span(r.Context(), "detokenize")
	start := s.stages.Start()
	text, err := s.model.Decode(req.Tokens, false)
	s.stages.Since(telemetry.StageDetokenize, start)
	span.End()
	s.metrics.generated[epDetokenize].Add(int64(len(req.Tokens)))
	if err != nil {
		var oov *model.OutOfVocabularyError
		if errors.As(err, &oov) {
			s.writeError(w, r, badRequest(err.Error(), nil))
			return
		}
		s.writeError(w, r, internalError())
		return
	}
	s.writeJSON(w, r, http.StatusOK, &protocol.DetokenizeResponse{Prompt: text})
}
