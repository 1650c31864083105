package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/orchestrator"
	"github.com/vrender/vrender/protocol"
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
		{http.MethodPost, "/v1/messages/render", epMessagesRender, (*server).handleMessagesRender},
		{http.MethodPost, "/v1/responses/render", epResponsesRender, (*server).handleResponsesRender},
		{http.MethodPost, "/v1/chat/completions/derender", epChatDerender, (*server).handleChatDerender},
		{http.MethodPost, "/v1/completions/derender", epCompletionDerender, (*server).handleCompletionDerender},
		{http.MethodPost, "/v1/chat/completions", epChat, (*server).handleChatCompletions},
		{http.MethodPost, "/v1/completions", epCompletion, (*server).handleCompletions},
		{http.MethodPost, "/v1/messages", epMessages, (*server).handleMessages},
		{http.MethodPost, "/v1/messages/count_tokens", epMessagesCountTokens, (*server).handleMessagesCountTokens},
		{http.MethodPost, "/v1/responses", epResponses, (*server).handleResponses},
		{http.MethodGet, "/metrics", epMetrics, (*server).handleMetrics},
	}
	for _, rt := range routeTable {
		endpointPaths[rt.ep] = rt.path
		endpointByPath[rt.path] = rt.ep
	}
}

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
