package server

import (
	"errors"
	"net/http"

	"github.com/vrender/vrender/protocol"
)

// handleTokenize answers POST /tokenize: the prompt form tokenizes the
// text, the chat form renders the conversation with the chat template first.
func (s *server) handleTokenize(w http.ResponseWriter, r *http.Request) {
	body, e := s.readJSONBody(w, r)
	if e != nil {
		s.writeError(w, r, e)
		return
	}
	req, err := protocol.DecodeTokenizeRequest(body)
	if err != nil {
		s.writeError(w, r, decodeError(err))
		return
	}
	if e := s.checkModel(req.ModelName()); e != nil {
		s.writeError(w, r, e)
		return
	}
	tok := s.model.Tokenizer
	var ids []int
	if req.Chat != nil {
		if ids, err = s.tokenizeChat(r.Context(), req.Chat); err != nil {
			s.writeError(w, r, s.renderError(r.Context(), err))
			return
		}
	} else {
		ids = tok.Encode(req.Completion.Prompt, req.Completion.AddSpecialTokens)
	}
	var strs []string
	if req.WantTokenStrs() {
		strs = make([]string, len(ids))
		for i, id := range ids {
			strs[i], _ = tok.IDToToken(id)
		}
	}
	s.writeJSON(w, r, http.StatusOK, protocol.TokenizeResponse{
		Count:       len(ids),
		MaxModelLen: s.model.MaxModelLen,
		Tokens:      ids,
		TokenStrs:   strs,
	})
}

// decodeError maps a request decoding failure to its error body.
func decodeError(err error) *apiError {
	var verr *protocol.ValidationError
	if errors.As(err, &verr) {
		return validationError(verr)
	}
	return badRequest(err.Error(), nil)
}
