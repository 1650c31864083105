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
	body, tree, e := s.readJSONTree(w, r)
	if e != nil {
		s.writeError(w, r, e)
		return
	}
	// A stream re-sends its chat_request on every call: the engine keeps
	// the decoded ones.
	batch, stream, err := protocol.DecodeDerenderChatTree(body, tree, s.derender.RequestCache())
	if err != nil {
		s.writeError(w, r, decodeError(err))
		return
	}
	var res any
	ctx, span := s.span(r.Context(), "derender")
	defer span.End()
	if stream != nil {
		if e := s.admitDerenderStream(epChatDerender, stream.Model, &stream.GenerateChunk, stream.PromptTokenIDs, stream.StreamState); e != nil {
			s.writeError(w, r, e)
			return
		}
		res, err = s.derender.ChatStream(ctx, stream, s.modelName(stream.Model))
	} else {
		if e := s.admitDerender(epChatDerender, batch.Model, generatedTokens(&batch.GenerateResponse), len(batch.PromptTokenIDs)); e != nil {
			s.writeError(w, r, e)
			return
		}
		res, err = s.derender.Chat(ctx, batch, s.modelName(batch.Model))
	}
	s.writeDerender(w, r, res, err)
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
	ctx, span := s.span(r.Context(), "derender")
	defer span.End()
	if stream != nil {
		if e := s.admitDerenderStream(epCompletionDerender, stream.Model, &stream.GenerateChunk, stream.PromptTokenIDs, stream.StreamState); e != nil {
			s.writeError(w, r, e)
			return
		}
		res, err = s.derender.CompletionStream(ctx, stream, s.modelName(stream.Model))
	} else {
		gens := make([]*protocol.GenerateResponse, len(batch.GenerateResponses))
		prompts := 0
		for i := range batch.GenerateResponses {
			gens[i] = &batch.GenerateResponses[i]
		}
		for _, p := range batch.PromptTokenIDs {
			prompts += len(p)
		}
		if e := s.admitDerender(epCompletionDerender, batch.Model, generatedTokens(gens...), prompts); e != nil {
			s.writeError(w, r, e)
			return
		}
		res, err = s.derender.Completion(ctx, batch, s.modelName(batch.Model))
	}
	s.writeDerender(w, r, res, err)
}

// admitDerender checks a derender request's model and the token ids it
// carries (generated plus prompt and stream state), then counts its
// generated tokens for ep.
func (s *server) admitDerender(ep endpoint, model *string, generated, other int) *apiError {
	if e := s.checkModel(model); e != nil {
		return e
	}
	if e := s.checkDerenderTokens(generated + other); e != nil {
		return e
	}
	s.metrics.generated[ep].Add(int64(generated))
	return nil
}

// admitDerenderStream is admitDerender for one stream event: its chunk,
// with the prompt and the stream state it carries.
func (s *server) admitDerenderStream(ep endpoint, model *string, chunk *protocol.GenerateResponse, prompt []int, state *protocol.DerenderStreamState) *apiError {
	return s.admitDerender(ep, model, generatedTokens(chunk), len(prompt)+streamStateTokens(state))
}

// writeDerender writes a derender answer, or its failure.
func (s *server) writeDerender(w http.ResponseWriter, r *http.Request, res any, err error) {
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
