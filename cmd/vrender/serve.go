package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/server"
	"github.com/vrender/vrender/tokenizer"
)

// runServe is `vrender serve`: load a model and serve the HTTP API until
// ctx is done (SIGINT/SIGTERM), then shut down gracefully.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommand("serve", "[MODEL] [options]",
		"Serve the HTTP API (vLLM's render tier: /v1/chat/completions/render, /v1/completions/render,\n"+
			"/v1/messages/render, /v1/responses/render, /v1/chat/completions/derender, /v1/completions/derender,\n"+
			"/v1/messages/count_tokens, /tokenize, /detokenize, /v1/models, /health, /version, /metrics) and,\n"+
			"with --engine, OpenAI's\n"+
			"/v1/chat/completions, /v1/completions and /v1/responses and Anthropic's /v1/messages\n"+
			"over tokens-only engines (--engine sim: the in-process simulated engine)\n"+
			"for MODEL, a local directory in Hugging Face layout or a model ID in the HF cache.\n"+
			"MODEL may come before or after the options, or be given with --model.")
	var (
		mf          modelFlags
		rf          renderFlags
		df          derenderFlags
		ef          engineFlags
		lf          loraFlags
		host        string
		port        int
		servedNames stringList
		stateKey    string
		sec         serveSecurityFlags
		tokCache    int64
	)
	mf.register(c, true)
	rf.register(c)
	df.register(c)
	ef.register(c)
	lf.register(c)
	c.fs.StringVar(&host, "host", "", "`HOST` address to listen on (default: all interfaces)")
	c.fs.IntVar(&port, "port", 8000, "`PORT` to listen on")
	c.fs.Var(&servedNames, "served-model-name", "`NAME`s clients may use in \"model\"; the first is the one reported (default: MODEL)")
	c.multi["served-model-name"] = true
	c.fs.StringVar(&stateKey, "state-key", "", "`KEY` (hex, or raw bytes; at least 16 bytes) signing the streaming derender checkpoints\n"+
		"in stream_state (default: env VRENDER_STATE_KEY; if neither is set, a random key per process,\n"+
		"so only this process can resume a checkpoint: give every replica the same key)")

	c.fs.Int64Var(&tokCache, "tokenizer-cache-size", tokenizer.DefaultSegmentCacheBytes,
		"`BYTES` bounding the cache of token ids of the text between special tokens, so a conversation\n"+
			"re-rendered each turn encodes only its new messages (0: off)")
	sec.register(c)
	c.sections = serveHelpSections

	rest, err := c.parse(args, stdout)
	if err != nil {
		return err
	}
	logBuf := newBufferedLog(stderr)
	defer logBuf.Close()
	log := slog.New(flushingHandler{slog.NewTextHandler(logBuf, nil), logBuf})
	switch {
	case len(rest) > 1:
		return usagef("unexpected argument %q", rest[1])
	case len(rest) == 1 && mf.model != "" && mf.model != rest[0]:
		// vLLM lets the positional MODEL win; say so rather than guess silently.
		log.Warn("both MODEL and --model given; using MODEL", "model", rest[0], "ignored", mf.model)
		mf.model = rest[0]
	case len(rest) == 1:
		mf.model = rest[0]
	}
	if port < 0 || port > 65535 {
		return usagef("--port %d is out of range", port)
	}
	if err := rf.validate(); err != nil {
		return err
	}
	if err := sec.validate(); err != nil {
		return err
	}
	if tokCache < 0 {
		return usagef("--tokenizer-cache-size %d is negative", tokCache)
	}
	names := []string(servedNames)
	if len(names) == 0 {
		names = []string{mf.model}
	}
	adapters, err := lf.adapters(names)
	if err != nil {
		return err
	}

	m, err := mf.load(ctx)
	if err != nil {
		return err
	}
	m.Tokenizer.SetSegmentCacheSize(tokCache)
	if st := m.Tokenizer.SegmentCacheStats(); tokCache > 0 && st.Disabled != nil {
		log.Warn("tokenizer segment cache off for this tokenizer", "reason", st.Disabled)
	}
	rf.maxPromptBytes = sec.promptBytes(m.MaxModelLen)
	gen, err := rf.generator(m)
	if err != nil {
		return err
	}
	der, err := df.engine(m, &rf)
	if err != nil {
		return err
	}
	if stateKey == "" {
		stateKey = os.Getenv("VRENDER_STATE_KEY")
	}
	if stateKey != "" {
		key, err := derender.ParseStateKey(stateKey)
		if err != nil {
			return usagef("--state-key: %v", err)
		}
		if err := der.SetStateKey(key); err != nil {
			return err
		}
	} else {
		log.Warn("no --state-key or VRENDER_STATE_KEY: derender checkpoints resume only in this process")
	}
	ef.simKeys = sec.keys()
	ef.servedNames = names
	ef.adapters = adapters
	orch, stopEngines, err := ef.orchestrator(ctx, m, gen, der, &rf, names[0], log)
	if err != nil {
		return err
	}
	defer stopEngines()
	tp, stopTracing, err := sec.tracing(ctx, log)
	if err != nil {
		return err
	}
	defer stopTracing()
	h, err := server.New(server.Config{
		APIKeys:          sec.keys(),
		MaxBodyBytes:     sec.maxBodyBytes,
		Limits:           server.Limits{MaxMessages: sec.maxMessages, MaxTools: sec.maxTools, MaxDerenderTokens: sec.maxDerenderTokens},
		LogRequests:      sec.logRequests,
		DisableAccessLog: sec.noAccessLog,
		TracerProvider:   tp,
		Orchestrator:     orch,
		Derender:         der,
		Generator:        gen,
		Model:            m,
		ModelPath:        mf.model,
		ServedModelNames: servedNames,
		LoRAModules:      adapters,
		Version:          vrenderVersion(),
		Logger:           log,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	log.Info("serving", "addr", ln.Addr().String(), "model", mf.model, "dir", m.Dir,
		"served_model_names", names, "lora_modules", len(adapters), "max_model_len", m.MaxModelLen, "max_prompt_bytes", rf.maxPromptBytes, "engines", []string(ef.engines),
		"version", vrenderVersion())
	return server.Serve(ctx, ln, h, server.ServeOptions{Logger: log, ShutdownTimeout: sec.shutdownTimeout})
}

// serveHelpSections is serve's --help by area, as vLLM groups its --help by
// config section (ModelConfig, Frontend, LoRAConfig, ...); every flag is in
// exactly one (TestServeHelpSections).
var serveHelpSections = []helpSection{
	{"Model", []string{"model", "served-model-name", "tokenizer", "revision", "max-model-len",
		"generation-config", "override-generation-config", "max-logprobs"}},
	{"Chat template and prompt rendering", []string{"chat-template", "chat-template-content-format",
		"default-chat-template-kwargs", "trust-request-chat-template", "exclude-tools-when-tool-choice-none",
		"tokenizer-cache-size"}},
	{"Tool calls and reasoning (output parsing)", []string{"enable-auto-tool-choice", "tool-call-parser",
		"reasoning-parser", "reasoning-field-compat", "derender-cache-size", "state-key"}},
	{"Images (models with a preprocessor_config.json)", []string{"limit-mm-per-prompt", "mm-processor-kwargs",
		"allowed-media-domains", "allowed-local-media-path", "max-media-bytes", "allow-private-media-urls", "mm-processor-cache-gb",
		"media-io-kwargs", "image-memory-budget", "enable-mm-embeds"}},
	{"LoRA adapters", []string{"enable-lora", "lora-modules"}},
	{"HTTP server, API keys and limits", []string{"host", "port", "api-key", "max-request-body-bytes",
		"max-messages", "max-tools", "max-prompt-bytes", "max-derender-tokens", "shutdown-timeout"}},
	{"Logging and tracing", []string{"enable-log-requests", "disable-uvicorn-access-log", "otlp-traces-endpoint"}},
	{"Engines (with them: /v1/chat/completions, /v1/completions, /v1/responses, /v1/messages)", []string{
		"engine", "prefill-engine", "decode-engine", "engine-config", "engine-api-key",
		"engine-health-interval", "engine-health-timeout", "engine-eject-after", "engine-eject-window",
		"engine-first-event-timeout", "engine-timeout", "engine-request-timeout", "engine-metrics-interval"}},
	{"Routing among engines", []string{"routing", "routing-prefix-weight", "routing-load-weight",
		"routing-queue-weight", "kv-block-size", "kv-events-endpoint", "kv-events-topic", "prefix-index-blocks",
		"prefix-predict-ttl"}},
	{"Simulated engine (--engine sim)", []string{"sim-script", "sim-token-latency", "sim-logprobs-shape",
		"sim-num-gpu-blocks-override", "sim-block-size", "sim-prefill-token-latency",
		"sim-enable-prompt-tokens-details", "sim-kv-events-config"}},
}
