package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/orchestrator"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
)

// frontEnd is an API served from its own package beside OpenAI's
// (anthropic, responses): the functions its rows in the route table call.
// The server keeps what every route shares: the body limit, the served
// model and the message and tool limits, metrics, tracing, and writing
// errors in the route's shape. A is the decoded request, R the one the
// routes run (Messages: its chat request).
type frontEnd[A, R any] struct {
	// decode validates a body as vLLM's model of the API; its errors are
	// FastAPI's 400, OpenAI-shaped on every route.
	decode func(body []byte) (A, error)
	// convert turns the decoded request into the one the routes run.
	convert func(A) (R, error)
	// check, when set, is the front end's own refusal after the model check.
	check func(*render.Generator, R) error
	// limits are what the server checks of R: the model it names, and its
	// message and tool counts.
	limits func(R) (model *string, messages, tools int)
	// render renders R for its render route: the prompt's token count and
	// the answer.
	render func(context.Context, *render.Generator, R) (tokens int, answer protocol.Appender, err error)
	// serve runs R through the orchestrator, baseID being the request id
	// vLLM's _base_request_id gives (from R's request_id).
	serve func(ctx context.Context, o *orchestrator.Orchestrator, req R, baseID func(bodyID *string) string, sink orchestrator.Sink) (protocol.Appender, error)
}

// errorShape is how a route writes an error: OpenAI's body, or a front
// end's own (Anthropic's on /v1/messages).
type errorShape func(dst []byte, errType, message string) []byte

// errWriterFor is the errWriter of shape (nil: OpenAI's).
func errWriterFor(shape errorShape) errWriter {
	if shape == nil {
		return (*server).writeError
	}
	return func(s *server, w http.ResponseWriter, r *http.Request, e *apiError) {
		if e.status >= 500 {
			s.log.ErrorContext(r.Context(), "request failed", "request_id", requestIDFrom(r.Context()),
				"status", e.status, "type", e.body.Error.Type)
		}
		s.writeJSON(w, r, e.status, protocol.RawJSON(shape(nil, e.body.Error.Type, e.body.Error.Message)))
	}
}

// read reads a front end's body: validated (an OpenAI-shaped 400 on
// failure), converted, then checked for the served model, the front end's
// own refusal and the message and tool limits; errors after validation
// are written by writeErr. On failure it returns false.
func (fe *frontEnd[A, R]) read(s *server, w http.ResponseWriter, r *http.Request, writeErr errWriter) (R, bool) {
	var zero R
	body, e := s.readJSONBody(w, r)
	if e != nil {
		s.writeError(w, r, e)
		return zero, false
	}
	a, err := fe.decode(body)
	if err != nil {
		s.writeError(w, r, decodeError(err))
		return zero, false
	}
	req, err := fe.convert(a)
	if err != nil {
		writeErr(s, w, r, decodeError(err))
		return zero, false
	}
	model, messages, tools := fe.limits(req)
	if e := s.checkModel(model); e != nil {
		writeErr(s, w, r, e)
		return zero, false
	}
	if fe.check != nil {
		if err := fe.check(s.generator, req); err != nil {
			writeErr(s, w, r, decodeError(err))
			return zero, false
		}
	}
	if e := s.checkChatLimits(messages, tools); e != nil {
		writeErr(s, w, r, e)
		return zero, false
	}
	return req, true
}

// renderRoute is the handler of a front end's render route: the request
// read and rendered, the answer written, the prompt tokens counted under
// ep; errors after validation in shape.
func (fe *frontEnd[A, R]) renderRoute(ep endpoint, shape errorShape) func(*server, http.ResponseWriter, *http.Request) {
	writeErr := errWriterFor(shape)
	return func(s *server, w http.ResponseWriter, r *http.Request) {
		req, ok := fe.read(s, w, r, writeErr)
		if !ok {
			return
		}
		ctx, span := s.span(r.Context(), "render")
		n, answer, err := fe.render(render.StreamedAnswer(ctx), s.generator, req)
		span.End()
		if err != nil {
			if ae := frontEndError(err); ae != nil {
				writeErr(s, w, r, ae)
				return
			}
			writeErr(s, w, r, s.renderError(r.Context(), err))
			return
		}
		s.metrics.prompt[ep].Add(int64(n))
		s.writeJSON(w, r, http.StatusOK, answer)
	}
}

// serveRoute is the handler of a front end's served route (through the
// orchestrator); errors after validation in shape.
func (fe *frontEnd[A, R]) serveRoute(shape errorShape) func(*server, http.ResponseWriter, *http.Request) {
	writeErr := errWriterFor(shape)
	read := func(s *server, w http.ResponseWriter, r *http.Request) (R, bool) { return fe.read(s, w, r, writeErr) }
	return func(s *server, w http.ResponseWriter, r *http.Request) {
		serveEngine(s, w, r, read, func(ctx context.Context, req R, sink orchestrator.Sink) (protocol.Appender, error) {
			return fe.serve(ctx, s.orchestrator, req, func(bodyID *string) string { return s.baseRequestID(r, bodyID) }, sink)
		}, writeErr)
	}
}

// responder is an error a front end answers with a body of its own making
// (responses.ParamError: a 400 naming the member, with vLLM's type).
type responder interface {
	error
	Response() protocol.ErrorResponse
}

// frontEndError is the answer of a front end's own error (a responder or
// a validation error of its converted request); nil for other errors.
func frontEndError(err error) *apiError {
	var re responder
	if errors.As(err, &re) {
		body := re.Response()
		return &apiError{body.Error.Code, body}
	}
	var verr *pylax.ValidationError
	if errors.As(err, &verr) {
		return validationError(verr)
	}
	return nil
}

// chatLimits are the limits of a front end that runs a chat request.
func chatLimits(req *protocol.ChatCompletionRequest) (*string, int, int) {
	return req.Model, len(req.Messages), len(req.Tools)
}

// renderChat renders a front end's chat request as
// /v1/chat/completions/render does.
func renderChat(ctx context.Context, g *render.Generator, req *protocol.ChatCompletionRequest) (int, protocol.Appender, error) {
	res, err := g.RenderChat(ctx, req)
	if err != nil {
		return 0, nil, err
	}
	return len(res.Request.TokenIDs), &res.Request, nil
}
