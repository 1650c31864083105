package server

import (
	"context"
	"net/http"
	"sync/atomic"

	"github.com/vrender/vrender/orchestrator"
	"github.com/vrender/vrender/protocol"
)

// noEngineMessage is the 503 of the OpenAI endpoints on a render-only
// server.
const noEngineMessage = "no engine is configured; start vrender serve with --engine URL or --engine sim"

// handleChatCompletions answers POST /v1/chat/completions through the
// orchestrator: vLLM's OpenAI chat endpoint over a tokens-only engine.
func (s *server) handleChatCompletions(w http.ResponseWriter, r *http.Request) {
	serveEngine(s, w, r, (*server).readChatRequest,
		func(ctx context.Context, req *protocol.ChatCompletionRequest, sink orchestrator.Sink) (protocol.Appender, error) {
			return s.orchestrator.Chat(ctx, orchestrator.ChatRun{API: orchestrator.APIChat, Request: req,
				ID: "chatcmpl-" + s.baseRequestID(r, req.RequestID), Stream: req.Stream != nil && *req.Stream}, sink)
		}, (*server).writeError)
}

// handleCompletions answers POST /v1/completions through the orchestrator.
func (s *server) handleCompletions(w http.ResponseWriter, r *http.Request) {
	serveEngine(s, w, r, (*server).readCompletionRequest,
		func(ctx context.Context, req *protocol.CompletionRequest, sink orchestrator.Sink) (protocol.Appender, error) {
			return s.orchestrator.Completion(ctx, req, s.baseRequestID(r, req.RequestID), sink)
		}, (*server).writeError)
}

// baseRequestID is vLLM's _base_request_id: the X-Request-Id header, else
// the body's request_id, else a new id (the one the access log carries).
func (s *server) baseRequestID(r *http.Request, bodyID *string) string {
	if id := r.Header.Get("X-Request-Id"); id != "" {
		return id
	}
	if bodyID != nil && *bodyID != "" {
		return *bodyID
	}
	if id := requestIDFrom(r.Context()); id != "" {
		return id
	}
	return protocol.RandomUUID()
}

func noEngine() *apiError {
	return &apiError{http.StatusServiceUnavailable, protocol.NewErrorResponse(http.StatusServiceUnavailable,
		http.StatusText(http.StatusServiceUnavailable), noEngineMessage, nil)}
}

// sseSink writes a text/event-stream response, flushing every frame. A
// started stream counts in vrender_inflight_streams until close.
type sseSink struct {
	w        http.ResponseWriter
	rc       *http.ResponseController
	started  bool
	inflight *atomic.Int64
}

func (s *server) newSSESink(w http.ResponseWriter, r *http.Request) *sseSink {
	return &sseSink{w: w, rc: http.NewResponseController(w), inflight: &s.metrics.inflightStreams}
}

// close ends the stream's count in the in-flight gauge.
func (s *sseSink) close() {
	if s.started {
		s.inflight.Add(-1)
	}
}

// Start implements orchestrator.Sink: the headers of Starlette's
// StreamingResponse(media_type="text/event-stream").
func (s *sseSink) Start() error {
	s.started = true
	s.inflight.Add(1)
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	s.w.WriteHeader(http.StatusOK)
	return s.rc.Flush()
}

// Frame implements orchestrator.Sink.
func (s *sseSink) Frame(frame []byte) error {
	if _, err := s.w.Write(frame); err != nil {
		return err
	}
	return s.rc.Flush()
}
