package server

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// tracerName is the instrumentation scope of the server's spans.
const tracerName = "github.com/vrender/vrender/server"

// traceContext reads and writes W3C traceparent/tracestate headers.
var traceContext = propagation.TraceContext{}

// trace joins the client's W3C trace context and, when tracing is on,
// starts the request's server span. With tracing off the incoming
// traceparent is still kept in the context, so that engines called for
// the request join the client's trace: propagation costs one header
// parse and needs no exporter.
func (s *server) trace(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if r.Header.Get("traceparent") != "" {
			ctx = traceContext.Extract(ctx, propagation.HeaderCarrier(r.Header))
		}
		if s.tracer == nil {
			next.ServeHTTP(w, r.WithContext(ctx))
			return
		}
		ctx, span := s.tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", r.Method),
				attribute.String("url.path", r.URL.Path),
				attribute.String("vrender.request_id", requestIDFrom(ctx))))
		defer span.End()
		rec, _ := w.(*statusRecorder)
		next.ServeHTTP(w, r.WithContext(ctx))
		route := endpointPaths[routeEndpoint(r)]
		span.SetName(r.Method + " " + route)
		span.SetAttributes(attribute.String("http.route", route))
		if rec != nil {
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			span.SetAttributes(attribute.Int("http.response.status_code", status))
			if status >= 500 {
				span.SetStatus(codes.Error, http.StatusText(status))
			}
		}
	})
}

// span starts a child span of the request's for one stage of a handler
// (render, derender, tokenize, detokenize); a no-op span when tracing is
// off.
func (s *server) span(ctx context.Context, name string) (context.Context, trace.Span) {
	return trace.SpanFromContext(ctx).TracerProvider().Tracer(tracerName).Start(ctx, name)
}
