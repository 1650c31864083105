package server

import (
	"errors"
	"net/http"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/responses"
)

// handleResponsesRender answers POST /v1/responses/render (vllm PR
// #50195): a self-contained Responses request is converted to chat
// messages as vLLM's non-Harmony Responses path does, rendered by the chat
// render path, and answered with one GenerateRequest whose sampling params
// are ResponsesRequest.to_sampling_params. previous_response_id is
// refused: the endpoint is stateless.
func (s *server) handleResponsesRender(w http.ResponseWriter, r *http.Request) {
	req, ok := s.readResponsesRequest(w, r)
	if !ok {
		return
	}
	ctx, span := s.span(r.Context(), "render")
	gr, err := responses.Render(ctx, s.generator, req)
	span.End()
	if err != nil {
		if ae := responsesError(err); ae != nil {
			s.writeError(w, r, ae)
			return
		}
		s.writeError(w, r, s.renderError(r.Context(), err))
		return
	}
	s.metrics.prompt[epResponsesRender].Add(int64(len(gr.TokenIDs)))
	s.writeJSON(w, r, http.StatusOK, gr)
}

// readResponsesRequest reads and validates a Responses body: JSON syntax,
// vLLM's validators, the served model name and the input and tool limits.
// On failure it has written the error and returns false.
func (s *server) readResponsesRequest(w http.ResponseWriter, r *http.Request) (*responses.Request, bool) {
	body, e := s.readJSONBody(w, r)
	if e != nil {
		s.writeError(w, r, e)
		return nil, false
	}
	req, err := responses.DecodeRequest(body)
	if err != nil {
		if ae := responsesError(err); ae != nil {
			s.writeError(w, r, ae)
			return nil, false
		}
		s.writeError(w, r, decodeError(err))
		return nil, false
	}
	if e := s.checkModel(req.Model); e != nil {
		s.writeError(w, r, e)
		return nil, false
	}
	if s.generator.Renderer().Harmony() {
		// vLLM renders a gpt-oss Responses request with openai_harmony's own
		// Responses conversion, not through the chat template; vrender has
		// not built that path, and the chat template route would fail with
		// a misleading template error.
		s.writeError(w, r, badRequest(errHarmonyResponses, nil))
		return nil, false
	}
	if e := s.checkChatLimits(len(req.InputItems), len(req.Tools)); e != nil {
		s.writeError(w, r, e)
		return nil, false
	}
	return req, true
}

// errHarmonyResponses is the 400 of a Responses request to a Harmony model.
const errHarmonyResponses = "The Responses API (/v1/responses, /v1/responses/render) is not implemented for Harmony models " +
	"(gpt-oss) in vrender yet; /v1/chat/completions, /v1/completions and /v1/messages serve them."

// responsesError maps the Responses route's own refusals and the chat
// validation of the converted request to their error bodies; nil for
// other errors (JSON syntax, render failures), which the caller maps.
func responsesError(err error) *apiError {
	var pe *responses.ParamError
	if errors.As(err, &pe) {
		ae := badRequest(pe.Message, optionalParam(pe.Param))
		if pe.Type != "" {
			ae.body.Error.Type = pe.Type
		}
		return ae
	}
	var verr *pylax.ValidationError
	if errors.As(err, &verr) {
		return validationError(verr)
	}
	return nil
}
