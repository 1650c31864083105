package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/vrender/vrender/anthropic"
	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/orchestrator"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/responses"
)

// route is one endpoint the server answers: its method, its path (also
// its metrics' endpoint label, as vLLM's http_requests_total names its
// handlers), the index of its counters and its handler.
type route struct {
	method string
	path   string
	ep     endpoint
	handle func(*server, http.ResponseWriter, *http.Request)
}

// routeTable is every route; routes registers it and the metrics read
// their labels from it (endpointPaths). init sets it once: as an
// initializer it would be an initialization cycle, since /metrics' handler
// reads the labels derived from it.
var routeTable []route

func init() {
	routeTable = []route{
		{http.MethodGet, "/health", epHealth, (*server).handleHealth},
		{http.MethodGet, "/version", epVersion, (*server).handleVersion},
		{http.MethodGet, "/v1/models", epModels, (*server).handleModels},
		{http.MethodPost, "/tokenize", epTokenize, (*server).handleTokenize},
		{http.MethodPost, "/detokenize", epDetokenize, (*server).handleDetokenize},
		{http.MethodPost, "/v1/chat/completions/render", epChatRender, (*server).handleChatRender},
		{http.MethodPost, "/v1/completions/render", epCompletionRender, (*server).handleCompletionRender},
		{http.MethodPost, "/v1/messages/render", epMessagesRender, messagesAPI.renderRoute(epMessagesRender, nil)},
		{http.MethodPost, "/v1/responses/render", epResponsesRender, responsesAPI.renderRoute(epResponsesRender, nil)},
		{http.MethodPost, "/v1/chat/completions/derender", epChatDerender, (*server).handleChatDerender},
		{http.MethodPost, "/v1/completions/derender", epCompletionDerender, (*server).handleCompletionDerender},
		{http.MethodPost, "/v1/chat/completions", epChat, (*server).handleChatCompletions},
		{http.MethodPost, "/v1/completions", epCompletion, (*server).handleCompletions},
		{http.MethodPost, "/v1/messages", epMessages, messagesAPI.serveRoute(anthropic.AppendError)},
		{http.MethodPost, "/v1/messages/count_tokens", epMessagesCountTokens, countTokensAPI.renderRoute(epMessagesCountTokens, anthropic.AppendError)},
		{http.MethodPost, "/v1/responses", epResponses, responsesAPI.serveRoute(nil)},
		{http.MethodGet, "/metrics", epMetrics, (*server).handleMetrics},
	}
	for _, rt := range routeTable {
		endpointPaths[rt.ep] = rt.path
		endpointByPath[rt.path] = rt.ep
	}
}

// The front ends served from their own packages. A body failing the
// request model's validation gets vLLM's app-wide validation answer
// (OpenAI-shaped, as FastAPI raises it before the route runs) on every
// route; later errors are in the route's shape: Anthropic's on /v1/messages
// and /v1/messages/count_tokens (vLLM's translate_error_response), OpenAI's
// on the render routes and the Responses routes.
var (
	// messagesAPI: Anthropic Messages, converted to the chat request vLLM
	// builds from it and rendered or served as that chat request.
	messagesAPI = &frontEnd[*anthropic.MessagesRequest, *protocol.ChatCompletionRequest]{
		decode: anthropic.DecodeMessagesRequest, convert: anthropic.ToChat, limits: chatLimits, render: renderChat,
		serve: func(ctx context.Context, o *orchestrator.Orchestrator, req *protocol.ChatCompletionRequest,
			baseID func(*string) string, sink orchestrator.Sink) (protocol.Appender, error) {
			return anthropic.Serve(ctx, o, req, baseID(req.RequestID), sink)
		},
	}
	// countTokensAPI: vLLM's AnthropicServingMessages.count_tokens; it
	// needs no engine.
	countTokensAPI = &frontEnd[*anthropic.MessagesRequest, *protocol.ChatCompletionRequest]{
		decode: anthropic.DecodeCountTokensRequest, convert: anthropic.CountTokensToChat, limits: chatLimits,
		render: anthropic.CountTokens,
	}
	// responsesAPI: OpenAI Responses (non-Harmony), converted to chat
	// messages as it is rendered or served.
	responsesAPI = &frontEnd[*responses.Request, *responses.Request]{
		decode: responses.DecodeRequest, convert: func(r *responses.Request) (*responses.Request, error) { return r, nil },
		check: responses.CheckGenerator, limits: responses.Limits, render: responses.RenderAnswer,
		serve: func(ctx context.Context, o *orchestrator.Orchestrator, req *responses.Request,
			_ func(*string) string, sink orchestrator.Sink) (protocol.Appender, error) {
			return responses.Serve(ctx, o, req, sink)
		},
	}
)

// errWriter writes an error answer in one front end's shape.
type errWriter func(*server, http.ResponseWriter, *http.Request, *apiError)

// serveEngine answers a route served through the orchestrator: the body
// read by read (which has written its refusal when it returns false), run
// by run with the client's stream as the sink, and finished by finish.
func serveEngine[R any](s *server, w http.ResponseWriter, r *http.Request,
	read func(*server, http.ResponseWriter, *http.Request) (R, bool),
	run func(context.Context, R, orchestrator.Sink) (protocol.Appender, error), writeErr errWriter) {
	req, ok := read(s, w, r)
	if !ok {
		return
	}
	if s.orchestrator == nil {
		writeErr(s, w, r, noEngine())
		return
	}
	sink := s.newSSESink(w, r)
	defer sink.close()
	res, err := run(r.Context(), req, sink)
	s.finish(w, r, sink, res, err, writeErr)
}

// finish writes what a served request has left to write: its
// non-streaming answer, or through writeErr the error that happened
// before any stream frame. A client that went away, or a stream that
// already carried its error, gets nothing more.
func (s *server) finish(w http.ResponseWriter, r *http.Request, sink *sseSink, res protocol.Appender, err error, writeErr errWriter) {
	var verr *pylax.ValidationError
	switch {
	case err == nil:
		if !sink.started && res != nil {
			s.writeJSON(w, r, http.StatusOK, res)
		}
		return
	case errors.Is(err, context.Canceled) || r.Context().Err() != nil:
		// The engine request was aborted.
		s.log.DebugContext(r.Context(), "client disconnected", "request_id", requestIDFrom(r.Context()))
		return
	case sink.started:
		s.log.WarnContext(r.Context(), "stream failed", "request_id", requestIDFrom(r.Context()), "err", err)
		return
	case errors.As(err, &verr):
		// A front end's own validation (Responses renders as it converts).
		writeErr(s, w, r, validationError(verr))
		return
	}
	oe := orchestrator.AsError(err)
	if oe.Status >= 500 {
		s.log.WarnContext(r.Context(), "engine request failed", "request_id", requestIDFrom(r.Context()),
			"status", oe.Status, "err", err)
	}
	writeErr(s, w, r, &apiError{oe.Status, protocol.ErrorResponse{Error: oe.Info()}})
}
