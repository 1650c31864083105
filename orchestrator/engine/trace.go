package engine

import "go.opentelemetry.io/otel/propagation"

// traceContext propagates the W3C traceparent and tracestate headers of
// the caller's span to the engine.
var traceContext = propagation.TraceContext{}
