package orchestrator

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracerName names the orchestrator's spans' instrumentation scope.
const tracerName = "github.com/vrender/vrender/orchestrator"

// startSpan starts a child of the span in ctx with that span's provider:
// the server decides whether tracing is on by the span it starts for the
// HTTP request, and when it is off the provider is a no-op, so the
// orchestrator needs no tracer of its own.
func startSpan(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return trace.SpanFromContext(ctx).TracerProvider().Tracer(tracerName).
		Start(ctx, name, trace.WithAttributes(attrs...))
}

// endSpan records err (if any) on span and ends it.
func endSpan(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
