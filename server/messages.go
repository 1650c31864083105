package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/vrender/vrender/anthropic"
	"github.com/vrender/vrender/orchestrator"
	"github.com/vrender/vrender/protocol"
)

// anthropicError is an error answer in Anthropic's shape, which vLLM's
// /v1/messages router gives every ErrorResponse its handler returns
// (translate_error_response): the OpenAI error's type and message, its
// code as the status.
type anthropicError struct {
	status int
	body   protocol.RawJSON
}

func toAnthropicError(e *apiError) *anthropicError {
	return &anthropicError{status: e.status,
		body: anthropic.AppendError(nil, e.body.Error.Type, e.body.Error.Message)}
}

func (s *server) writeAnthropicError(w http.ResponseWriter, r *http.Request, e *apiError) {
	if e.status >= 500 {
		s.log.ErrorContext(r.Context(), "request failed", "request_id", requestIDFrom(r.Context()),
			"status", e.status, "type", e.body.Error.Type)
	}
	ae := toAnthropicError(e)
	s.writeJSON(w, r, ae.status, ae.body)
}

// handleMessages answers POST /v1/messages through the orchestrator:
// vLLM's Anthropic Messages endpoint over a tokens-only engine. A body
// that fails the request model's validation gets vLLM's app-wide
// validation answer (OpenAI-shaped, as FastAPI raises it before the
// route runs); every later error is Anthropic-shaped.
func (s *server) handleMessages(w http.ResponseWriter, r *http.Request) {
	req, ok := s.readMessagesRequest(w, r, s.writeAnthropicError)
	if !ok {
		return
	}
	if s.orchestrator == nil {
		s.writeAnthropicError(w, r, noEngine())
		return
	}
	sink := s.newSSESink(w, r)
	defer sink.close()
	res, err := anthropic.Serve(r.Context(), s.orchestrator, req, s.baseRequestID(r, req.RequestID), sink)
	if e := s.servedError(r, sink, err); e != nil {
		s.writeAnthropicError(w, r, e)
		return
	}
	if err == nil && !sink.started && res != nil {
		s.writeJSON(w, r, http.StatusOK, res)
	}
}

// servedError is the error answer for an orchestrator error that happened
// before any stream frame; nil when there is none to write (no error, the
// client went away, or the stream already carried it).
func (s *server) servedError(r *http.Request, sink *sseSink, err error) *apiError {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled) || r.Context().Err() != nil:
		s.log.DebugContext(r.Context(), "client disconnected", "request_id", requestIDFrom(r.Context()))
		return nil
	case sink.started:
		s.log.WarnContext(r.Context(), "stream failed", "request_id", requestIDFrom(r.Context()), "err", err)
		return nil
	}
	oe := orchestrator.AsError(err)
	if oe.Status >= 500 {
		s.log.WarnContext(r.Context(), "engine request failed", "request_id", requestIDFrom(r.Context()),
			"status", oe.Status, "err", err)
	}
	return &apiError{oe.Status, protocol.ErrorResponse{Error: oe.Info()}}
}

// handleMessagesCountTokens answers POST /v1/messages/count_tokens as
// vLLM's AnthropicServingMessages.count_tokens: the request converted to
// chat (model, messages, system, tools, tool_choice, chat_template_kwargs)
// and rendered; the answer is the prompt's token count. It needs no engine.
func (s *server) handleMessagesCountTokens(w http.ResponseWriter, r *http.Request) {
	body, e := s.readJSONBody(w, r)
	if e != nil {
		s.writeError(w, r, e)
		return
	}
	areq, err := protocol.DecodeAnthropicCountTokensRequest(body)
	if err != nil {
		s.writeError(w, r, decodeError(err))
		return
	}
	req, err := anthropic.CountTokensToChat(areq)
	if err != nil {
		s.writeAnthropicError(w, r, decodeError(err))
		return
	}
	if e := s.checkModel(req.Model); e != nil {
		s.writeAnthropicError(w, r, e)
		return
	}
	if e := s.checkChatLimits(len(req.Messages), len(req.Tools)); e != nil {
		s.writeAnthropicError(w, r, e)
		return
	}
	ctx, span := s.span(r.Context(), "render")
	res, err := s.generator.RenderChat(ctx, req)
	span.End()
	if err != nil {
		s.writeAnthropicError(w, r, s.renderError(r.Context(), err))
		return
	}
	n := len(res.Request.TokenIDs)
	s.metrics.prompt[epMessagesCountTokens].Add(int64(n))
	s.writeJSON(w, r, http.StatusOK, protocol.RawJSON(anthropic.AppendCountTokens(nil, n)))
}
