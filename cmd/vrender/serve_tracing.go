package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// tracesEndpointEnv is OpenTelemetry's standard variable, which vLLM's
// --otlp-traces-endpoint sets too.
const tracesEndpointEnv = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"

// tracesEndpoint is --otlp-traces-endpoint, else the environment's.
func tracesEndpoint(flag string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv(tracesEndpointEnv)
}

// newTracerProvider exports spans in batches to an OTLP/HTTP (protobuf)
// collector at endpoint, a URL such as http://collector:4318 (the
// /v1/traces path is added when the URL has none). The returned stop
// flushes pending spans.
func newTracerProvider(ctx context.Context, endpoint, version string) (trace.TracerProvider, func(context.Context) error, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, nil, usagef("--otlp-traces-endpoint %q: want http://host:port[/path] or https://…", endpoint)
	}
	if strings.Trim(u.Path, "/") == "" {
		u.Path = "/v1/traces"
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(u.String()))
	if err != nil {
		return nil, nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	res := resource.NewSchemaless(attribute.String("service.name", "vrender"),
		attribute.String("service.version", version))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(2*time.Second)),
		sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}
