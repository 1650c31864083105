package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
)

// apiError is a failed request: the status and the vLLM error body to send.
type apiError struct {
	status int
	body   protocol.ErrorResponse
}

func (e *apiError) Error() string { return e.body.Error.Message }

// badRequest is vLLM's answer to a ValueError or VLLMValidationError (400
// BadRequestError).
func badRequest(message string, param *string) *apiError {
	return &apiError{http.StatusBadRequest,
		protocol.NewErrorResponse(http.StatusBadRequest, protocol.ErrorTypeBadRequest, message, param)}
}

// notFoundModel is vLLM's answer to a request naming a model it does not serve.
func notFoundModel(name string) *apiError {
	param := "model"
	return &apiError{http.StatusNotFound, protocol.NewErrorResponse(http.StatusNotFound,
		protocol.ErrorTypeNotFound, "The model `"+name+"` does not exist.", &param)}
}

// internalError is the answer to an unexpected failure; the cause is
// logged, never sent.
func internalError() *apiError {
	return &apiError{http.StatusInternalServerError, protocol.NewErrorResponse(http.StatusInternalServerError,
		protocol.ErrorTypeInternal, "Internal Server Error", nil)}
}

// httpError is what vLLM's HTTPException handler sends: the type is the
// status phrase.
func httpError(status int, detail string) *apiError {
	return &apiError{status, protocol.NewHTTPErrorResponse(status, detail)}
}

// validationError is vLLM's 400 for a body that failed validation.
func validationError(err *pylax.ValidationError) *apiError {
	return &apiError{http.StatusBadRequest, protocol.NewValidationErrorResponse(err)}
}

// writeError writes every error body the server sends.
func (s *server) writeError(w http.ResponseWriter, r *http.Request, e *apiError) {
	if e.status >= 500 {
		s.log.ErrorContext(r.Context(), "request failed", "request_id", requestIDFrom(r.Context()),
			"status", e.status, "type", e.body.Error.Type)
	}
	s.writeJSON(w, r, e.status, e.body)
}

// writeJSON writes a JSON body as vLLM's JSONResponse does: compact,
// UTF-8, no HTML escaping. The body is appended into a pooled buffer, and
// the long parts are spliced in by a body that has them
// (protocol.GenerateRequest.AppendBody): an image's pixel values are made
// and encoded a chunk at a time, each chunk written while it is in the
// CPU's cache. Every length is known before the
// first byte, so Content-Length is set and the pieces make one unchunked
// body; everything that can fail has run before the status line.
func (s *server) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	hint := 0
	if h, ok := v.(interface{ BodySizeHint() int }); ok {
		hint = h.BodySizeHint()
	}
	bp := s.bodies.get(hint)
	defer s.bodies.put(bp)
	body := wire.Body{B: (*bp)[:0]}
	var err error
	if a, ok := v.(interface{ AppendBody(*wire.Body) error }); ok {
		err = a.AppendBody(&body)
	} else {
		body.B, err = protocol.AppendJSON(body.B, v)
	}
	if err != nil {
		// Only a programming error (an unmarshalable value) gets here.
		s.log.ErrorContext(r.Context(), "encode response", "request_id", requestIDFrom(r.Context()), "err", err)
		status = http.StatusInternalServerError
		body.Reset()
		body.B, _ = protocol.AppendJSON(body.B, internalError().body)
	}
	*bp = body.B
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(body.Len()))
	w.WriteHeader(status)
	GrowSendBuffer(r.Context(), body.Len())
	if _, err := body.WriteTo(liveWriter{r.Context(), w}); err != nil {
		// The client went away (net/http closes a connection whose body
		// is short of its Content-Length); nothing more to do, unless the
		// body itself was wrong.
		level := slog.LevelDebug
		if errors.Is(err, wire.ErrSpliceLength) {
			level = slog.LevelError
		}
		s.log.Log(r.Context(), level, "write response", "request_id", requestIDFrom(r.Context()), "err", err)
	}
}

// liveWriter writes to w while ctx is live: a body whose image pixel values
// are made as it is written (features.PendingPixels) stops at the next
// chunk once its client has gone away, even while the socket still takes
// bytes.
type liveWriter struct {
	ctx context.Context
	w   io.Writer
}

func (l liveWriter) Write(p []byte) (int, error) {
	if err := l.ctx.Err(); err != nil {
		return 0, err
	}
	return l.w.Write(p)
}

// bodyPool holds response buffers between requests; a 9k-token render
// body is about 60 KB. Bodies of tensors written into the body itself
// (image_embeds, 15 MB for a 1280x720 image's worth; an image's pixel values
// are spliced in instead, made as they are written)
// have a pool of their own: a fresh one costs its zeroing and page faults,
// and keeping them apart means a text request never holds one, so they are
// dropped two garbage collections after such traffic stops. The zero value
// is ready to use.
type bodyPool struct{ small, large sync.Pool }

// maxPooledBody bounds what the small pool keeps, so that one huge
// response does not pin its buffer for the life of the process;
// maxPooledLargeBody bounds the large pool (a few 1080p images' pixel
// values).
const (
	maxPooledBody      = 1 << 20
	maxPooledLargeBody = 128 << 20
)

// get returns an empty buffer for a body of about hint bytes (0: small).
func (p *bodyPool) get(hint int) *[]byte {
	if hint > maxPooledBody {
		if bp, ok := p.large.Get().(*[]byte); ok {
			return bp
		}
		b := make([]byte, 0, hint)
		return &b
	}
	if bp, ok := p.small.Get().(*[]byte); ok {
		return bp
	}
	b := make([]byte, 0, 4<<10)
	return &b
}

func (p *bodyPool) put(bp *[]byte) {
	*bp = (*bp)[:0]
	switch c := cap(*bp); {
	case c <= maxPooledBody:
		p.small.Put(bp)
	case c <= maxPooledLargeBody:
		p.large.Put(bp)
	}
}
