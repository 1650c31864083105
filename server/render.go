package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
)

// handleChatRender answers POST /v1/chat/completions/render with the one
// GenerateRequest vLLM's render server builds from a chat request.
func (s *server) handleChatRender(w http.ResponseWriter, r *http.Request) {
	req, ok := s.readChatRequest(w, r)
	if !ok {
		return
	}
	s.writeChatRender(w, r, req, epChatRender)
}

// writeChatRender renders a validated chat request and writes its
// GenerateRequest, counting the prompt tokens under ep.
func (s *server) writeChatRender(w http.ResponseWriter, r *http.Request, req *protocol.ChatCompletionRequest, ep endpoint) {
	ctx, span := s.span(r.Context(), "render")
	res, err := s.generator.RenderChat(render.StreamedAnswer(ctx), req)
	span.End()
	if err != nil {
		s.writeError(w, r, s.renderError(r.Context(), err))
		return
	}
	s.metrics.prompt[ep].Add(int64(len(res.Request.TokenIDs)))
	s.writeJSON(w, r, http.StatusOK, &res.Request)
}

// handleCompletionRender answers POST /v1/completions/render with a JSON
// array of GenerateRequests, one per prompt.
func (s *server) handleCompletionRender(w http.ResponseWriter, r *http.Request) {
	req, ok := s.readCompletionRequest(w, r)
	if !ok {
		return
	}
	ctx, span := s.span(r.Context(), "render")
	reqs, err := s.generator.RenderCompletion(ctx, req)
	span.End()
	if err != nil {
		s.writeError(w, r, s.renderError(r.Context(), err))
		return
	}
	for i := range reqs {
		s.metrics.prompt[epCompletionRender].Add(int64(len(reqs[i].TokenIDs)))
	}
	s.writeJSON(w, r, http.StatusOK, protocol.GenerateRequests(reqs))
}

// tokenizeChat renders the chat form of /tokenize as vLLM's tokenize
// handler does: the chat template trust check, then the template with the
// request's tools, and no length limit but the server's prompt byte limit.
func (s *server) tokenizeChat(ctx context.Context, req *protocol.TokenizeChatRequest) ([]int, error) {
	if err := s.generator.CheckChatRequest(protocol.ToolChoice{}, req.ChatTemplate, req.ChatTemplateKwargs); err != nil {
		return nil, err
	}
	prompt, err := s.generator.Renderer().RenderChat(ctx, render.ChatInput{
		Messages:             req.Messages,
		Tools:                req.Tools,
		ChatTemplate:         req.ChatTemplate,
		ChatTemplateKwargs:   req.ChatTemplateKwargs,
		AddGenerationPrompt:  req.AddGenerationPrompt,
		ContinueFinalMessage: req.ContinueFinalMessage,
		AddSpecialTokens:     req.AddSpecialTokens,
		MMProcessorKwargs:    req.MMProcessorKwargs,
		MediaIOKwargs:        req.MediaIOKwargs,
		// /tokenize answers ids only: image sizes come from the headers.
		OmitMMKwargs: true,
		CheckText:    s.generator.CheckPromptBytes,
	})
	if err != nil {
		return nil, err
	}
	return prompt.TokenIDs, nil
}

// renderError maps a render failure to its error body: a request vLLM
// refuses is a 400 BadRequestError with vLLM's message and parameter;
// anything else is a logged 500.
func (s *server) renderError(ctx context.Context, err error) *apiError {
	var img *render.ImageError
	if errors.As(err, &img) {
		if img.Status >= 500 {
			s.log.WarnContext(ctx, "image failed", "request_id", requestIDFrom(ctx), "err", err)
		}
		return &apiError{img.Status, protocol.NewErrorResponse(img.Status, img.Type, img.Message, optionalParam(img.Param))}
	}
	var bad *render.BadRequestError
	if errors.As(err, &bad) {
		if errors.Is(err, render.ErrPromptTooLarge) {
			s.metrics.limited.Add(1)
		}
		return badRequest(bad.Message, optionalParam(bad.Param))
	}
	s.log.ErrorContext(ctx, "render failed", "request_id", requestIDFrom(ctx), "err", err)
	return internalError()
}

// readChatRequest reads and validates a chat completion body: JSON syntax,
// vLLM's pydantic checks, the served model name and the message and tool
// limits. On failure it has written the error and returns false.
func (s *server) readChatRequest(w http.ResponseWriter, r *http.Request) (*protocol.ChatCompletionRequest, bool) {
	body, tree, e := s.readJSONTree(w, r)
	if e != nil {
		s.writeError(w, r, e)
		return nil, false
	}
	req, err := protocol.DecodeChatCompletionTree(body, tree)
	if err != nil {
		s.writeError(w, r, decodeError(err))
		return nil, false
	}
	if e := s.checkModel(req.Model); e != nil {
		s.writeError(w, r, e)
		return nil, false
	}
	if e := s.checkChatLimits(len(req.Messages), len(req.Tools)); e != nil {
		s.writeError(w, r, e)
		return nil, false
	}
	return req, true
}

// readCompletionRequest is readChatRequest for a completion body.
func (s *server) readCompletionRequest(w http.ResponseWriter, r *http.Request) (*protocol.CompletionRequest, bool) {
	body, e := s.readJSONBody(w, r)
	if e != nil {
		s.writeError(w, r, e)
		return nil, false
	}
	req, err := protocol.DecodeCompletionRequest(body)
	if err != nil {
		s.writeError(w, r, decodeError(err))
		return nil, false
	}
	if e := s.checkModel(req.Model); e != nil {
		s.writeError(w, r, e)
		return nil, false
	}
	return req, true
}

// optionalParam is an error body's param: null when empty.
func optionalParam(p string) *string {
	if p == "" {
		return nil
	}
	return &p
}
