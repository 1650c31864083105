package server

import (
	"errors"
	"net/http"

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
	text, err := s.model.Decode(req.Tokens, false)
	if err != nil {
		var oov *model.OutOfVocabularyError
		if errors.As(err, &oov) {
			s.writeError(w, r, badRequest(err.Error(), nil))
			return
		}
		s.writeError(w, r, internalError())
		return
	}
	s.writeJSON(w, r, http.StatusOK, protocol.DetokenizeResponse{Prompt: text})
}
