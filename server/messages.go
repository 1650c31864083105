package server

import (
	"context"
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
	read := func(s *server, w http.ResponseWriter, r *http.Request) (*protocol.ChatCompletionRequest, bool) {
		return s.readMessagesRequest(w, r, s.writeAnthropicError)
	}
	serveEngine(s, w, r, read,
		func(ctx context.Context, req *protocol.ChatCompletionRequest, sink orchestrator.Sink) (protocol.Appender, error) {
			return anthropic.Serve(ctx, s.orchestrator, req, s.baseRequestID(r, req.RequestID), sink)
		}, (*server).writeAnthropicError)
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
	areq, err := anthropic.DecodeCountTokensRequest(body)
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
