package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/vrender/vrender/render"
	"github.com/vrender/vrender/server"
)

// apiKeyEnv is vrender's VLLM_API_KEY: the key when --api-key is absent.
const apiKeyEnv = "VRENDER_API_KEY"

// serveSecurityFlags are serve's authentication, limit, logging, tracing
// and shutdown flags.
type serveSecurityFlags struct {
	apiKeys           stringList
	maxBodyBytes      int64
	maxMessages       int
	maxTools          int
	maxDerenderTokens int
	maxPromptBytes    int
	logRequests       bool
	noAccessLog       bool
	otlpEndpoint      string
	shutdownTimeout   time.Duration
}

func (f *serveSecurityFlags) register(c *command) {
	c.fs.Var(&f.apiKeys, "api-key", "`KEY` clients must send as \"Authorization: Bearer KEY\" on /v1/*, /tokenize and /detokenize\n"+
		"(/health, /metrics and /version stay open; an in-process --engine sim demands it on all but /health);\n"+
		"repeat to accept several (default: env "+apiKeyEnv+"; none: no auth)")
	c.multi["api-key"] = true
	c.fs.Int64Var(&f.maxBodyBytes, "max-request-body-bytes", server.DefaultMaxBodyBytes, "`N`: larger request bodies get 413")
	c.fs.IntVar(&f.maxMessages, "max-messages", server.DefaultMaxMessages, "`N`: chat requests with more messages get 400 (-1: no limit)")
	c.fs.IntVar(&f.maxTools, "max-tools", server.DefaultMaxTools, "`N`: chat requests with more tools get 400 (-1: no limit)")
	c.fs.IntVar(&f.maxDerenderTokens, "max-derender-tokens", server.DefaultMaxDerenderTokens,
		"`N`: derender and detokenize requests carrying more token ids get 400 (-1: no limit)")
	c.fs.IntVar(&f.maxPromptBytes, "max-prompt-bytes", 0,
		"`N`: a prompt (a /tokenize prompt, a rendered chat prompt, each completion prompt) longer than N bytes\n"+
			"gets 400 before it is tokenized (0: 16 bytes per token of --max-model-len, at least 1 MiB; -1: no limit)")
	c.fs.BoolVar(&f.logRequests, "enable-log-requests", false, "log request bodies (prompts) at info; API keys are never logged")
	c.fs.BoolVar(&f.noAccessLog, "disable-uvicorn-access-log", false, "no access log line per request (vLLM's flag; 5xx answers are still logged as errors)")
	c.fs.StringVar(&f.otlpEndpoint, "otlp-traces-endpoint", "", "`URL` of an OTLP/HTTP collector (e.g. http://otel:4318) receiving OpenTelemetry traces\n"+
		"(default: env "+tracesEndpointEnv+"; none: no tracing, an incoming traceparent is still passed to engines)")
	c.fs.DurationVar(&f.shutdownTimeout, "shutdown-timeout", server.DefaultShutdownTimeout,
		"`DURATION` in-flight requests and streams may run after SIGTERM before they are cancelled (engine requests aborted)")
}

func (f *serveSecurityFlags) validate() error {
	switch {
	case f.maxBodyBytes <= 0:
		return usagef("--max-request-body-bytes must be positive")
	case f.shutdownTimeout <= 0:
		return usagef("--shutdown-timeout must be positive")
	case f.maxMessages == 0 || f.maxTools == 0 || f.maxDerenderTokens == 0:
		return usagef("--max-messages, --max-tools and --max-derender-tokens must be positive or -1")
	case f.maxPromptBytes < -1:
		return usagef("--max-prompt-bytes must be positive, 0 (derived from --max-model-len) or -1 (no limit)")
	}
	return nil
}

// promptBytes is the prompt byte limit for a context of maxModelLen tokens,
// as render.GeneratorConfig takes it (0: none).
func (f *serveSecurityFlags) promptBytes(maxModelLen int) int {
	switch f.maxPromptBytes {
	case 0:
		return render.DefaultMaxPromptBytes(maxModelLen)
	case -1:
		return 0
	}
	return f.maxPromptBytes
}

// keys are the accepted API keys: the flags', else the environment's.
func (f *serveSecurityFlags) keys() []string {
	if len(f.apiKeys) > 0 {
		return f.apiKeys
	}
	if k := os.Getenv(apiKeyEnv); k != "" {
		return []string{k}
	}
	return nil
}

// tracing starts the OTLP exporter when an endpoint is configured; the
// returned stop flushes it. With none, the provider is nil (no spans).
func (f *serveSecurityFlags) tracing(ctx context.Context, log *slog.Logger) (trace.TracerProvider, func(), error) {
	endpoint := tracesEndpoint(f.otlpEndpoint)
	if endpoint == "" {
		return nil, func() {}, nil
	}
	tp, shutdown, err := newTracerProvider(ctx, endpoint, vrenderVersion())
	if err != nil {
		return nil, nil, err
	}
	log.Info("tracing enabled", "otlp_traces_endpoint", endpoint)
	return tp, func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := shutdown(sctx); err != nil {
			log.Warn("flushing traces", "err", err)
		}
	}, nil
}
