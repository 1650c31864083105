package server

import (
	"context"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/vrender/vrender/protocol"
)

type ctxKey int

const requestIDKey ctxKey = iota

// requestIDFrom returns the request's ID ("" outside a request).
func requestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// requestID echoes the client's X-Request-Id or, when there is none,
// generates one (a uuid4 in hex, as vLLM does) and sets it on the response.
func requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if id == "" {
			id = protocol.RandomUUID()
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey, id)))
	})
}

// statusRecorder remembers what a handler wrote, for the access log.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusRecorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Flush keeps streaming responses (SSE) working through the recorder.
func (w *statusRecorder) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// accessLog logs one line per request: method, path, status, size,
// duration, and counts it in vrender_requests_total. Never bodies, query
// strings or headers: they carry prompts, outputs and API keys. With
// --disable-uvicorn-access-log only 5xx answers are logged.
func (s *server) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		s.metrics.inflightRequests.Add(1)
		defer s.metrics.inflightRequests.Add(-1)
		next.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		s.metrics.request(routeEndpoint(r), rec.status)
		level := slog.LevelInfo
		if rec.status >= 500 {
			level = slog.LevelError
		} else if s.noAccessLog {
			return
		}
		s.log.LogAttrs(r.Context(), level, "request",
			slog.String("request_id", requestIDFrom(r.Context())),
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", rec.status),
			slog.Int64("bytes", rec.bytes),
			slog.Duration("duration", time.Since(start)),
			slog.String("remote", r.RemoteAddr),
		)
	})
}

// recoverPanics turns a handler panic into a logged 500 with vLLM's error
// body, instead of a dropped connection. http.ErrAbortHandler is re-raised:
// it is net/http's way to abort a response on purpose.
func (s *server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.ErrorContext(r.Context(), "handler panic", "request_id", requestIDFrom(r.Context()),
				"panic", v, "stack", string(debug.Stack()))
			s.writeError(w, r, internalError())
		}()
		next.ServeHTTP(w, r)
	})
}
