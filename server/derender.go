package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/protocol"
)

// handleChatDerender answers POST /v1/chat/completions/derender, batch or
// (stream: true) one stream event.
func (s *server) handleChatDerender(w http.ResponseWriter, r *http.Request) {
	body, e := s.readJSONBody(w, r)
	if e != nil {
		s.writeError(w, r, e)
		return
	}
	// A stream re-sends its chat_request on every call: the engine keeps
	// the decoded ones.
	batch, stream, err := protocol.DecodeDerenderChatCached(body, s.derender.RequestCache())
	if err != nil {
		s.writeError(w, r, decodeError(err))
		return
	}
	var res any
	if stream != nil {
		if e := s.checkModel(stream.Model); e != nil {
			s.writeError(w, r, e)
			return
		}
		res, err = s.derender.ChatStream(r.Context(), stream, s.modelName(stream.Model))
	} else {
		if e := s.checkModel(batch.Model); e != nil {
			s.writeError(w, r, e)
			return
		}
		res, err = s.derender.Chat(r.Context(), batch, s.modelName(batch.Model))
	}
	if err != nil {
		s.writeError(w, r, s.derenderError(r.Context(), err))
		return
	}
	s.writeJSON(w, r, http.StatusOK, res)
}

// handleCompletionDerender answers POST /v1/completions/derender.
func (s *server) handleCompletionDerender(w http.ResponseWriter, r *http.Request) {
	body, e := s.readJSONBody(w, r)
	if e != nil {
		s.writeError(w, r, e)
		return
	}
	batch, stream, err := protocol.DecodeDerenderCompletion(body)
	if err != nil {
		s.writeError(w, r, decodeError(err))
		return
	}
	var res any
	if stream != nil {
		if e := s.checkModel(stream.Model); e != nil {
			s.writeError(w, r, e)
			return
		}
		res, err = s.derender.CompletionStream(r.Context(), stream, s.modelName(stream.Model))
	} else {
		if e := s.checkModel(batch.Model); e != nil {
			s.writeError(w, r, e)
			return
		}
		res, err = s.derender.Completion(r.Context(), batch, s.modelName(batch.Model))
	}
	if err != nil {
		s.writeError(w, r, s.derenderError(r.Context(), err))
		return
	}
	s.writeJSON(w, r, http.StatusOK, res)
}

// modelName is the request's model, or the served name when absent.
func (s *server) modelName(name *string) string {
	if name != nil && *name != "" {
		return *name
	}
	return s.servedNames[0]
}

// derenderError maps a derender failure: vLLM's ValueErrors are 400s.
func (s *server) derenderError(ctx context.Context, err error) *apiError {
	var bad *derender.BadRequestError
	if errors.As(err, &bad) {
		return badRequest(bad.Message, nil)
	}
	s.log.ErrorContext(ctx, "derender failed", "request_id", requestIDFrom(ctx), "err", err)
	return internalError()
}
