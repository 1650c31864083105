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
	"github.com/vrender/vrender/internal/gcpace"
	"github.com/vrender/vrender/render"
	"github.com/vrender/vrender/server"
	"github.com/vrender/vrender/tokenizer"
)

// runServe is `vrender serve`: load a model and serve the HTTP API until
// ctx is done (SIGINT/SIGTERM), then shut down gracefully.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f serveFlags
	c := f.command()
	rest, err := c.parse(args, stdout)
	if err != nil {
		return err
	}
	logBuf := newBufferedLog(stderr)
	defer logBuf.Close()
	log := slog.New(flushingHandler{slog.NewTextHandler(logBuf, nil), logBuf})
	if err := f.check(rest, log); err != nil {
		return err
	}
	names := []string(f.servedNames)
	if len(names) == 0 {
		names = []string{f.mf.model}
	}
	adapters, err := f.lf.adapters(names)
	if err != nil {
		return err
	}

	m, err := f.mf.load(ctx)
	if err != nil {
		return err
	}
	m.Tokenizer.SetSegmentCacheSize(f.tokCache)
	if st := m.Tokenizer.SegmentCacheStats(); f.tokCache > 0 && st.Disabled != nil {
		log.Warn("tokenizer segment cache off for this tokenizer", "reason", st.Disabled)
	}
	f.rf.maxPromptBytes = f.sec.promptBytes(m.MaxModelLen)
	gen, err := f.rf.generator(m)
	if err != nil {
		return err
	}
	if f.imageCacheGCHeadroom >= 0 {
		// The GC percent is the process's, not this server's: serve owns
		// it because a server is the process's one long-lived user of
		// memory (the image cache it paces around is this server's), and
		// hands back the percent it found when it returns, so that a run
		// in-process (the tests) leaves the runtime as it was.
		defer gcpace.Start(imageCacheBytes(gen.Renderer()), uint64(f.imageCacheGCHeadroom))()
	}
	der, err := f.df.engine(m, &f.rf)
	if err != nil {
		return err
	}
	if err := setStateKey(der, f.stateKey, log); err != nil {
		return err
	}
	f.ef.simKeys = f.sec.keys()
	f.ef.servedNames = names
	f.ef.adapters = adapters
	orch, stopEngines, err := f.ef.orchestrator(ctx, m, gen, der, &f.rf, names[0], log)
	if err != nil {
		return err
	}
	defer stopEngines()
	tp, stopTracing, err := f.sec.tracing(ctx, log)
	if err != nil {
		return err
	}
	defer stopTracing()
	h, err := server.New(server.Config{
		APIKeys:          f.sec.keys(),
		MaxBodyBytes:     f.sec.maxBodyBytes,
		Limits:           server.Limits{MaxMessages: f.sec.maxMessages, MaxTools: f.sec.maxTools, MaxDerenderTokens: f.sec.maxDerenderTokens},
		LogRequests:      f.sec.logRequests,
		DisableAccessLog: f.sec.noAccessLog,
		TracerProvider:   tp,
		Orchestrator:     orch,
		Derender:         der,
		Generator:        gen,
		Model:            m,
		ModelPath:        f.mf.model,
		ServedModelNames: f.servedNames,
		LoRAModules:      adapters,
		Version:          vrenderVersion(),
		Logger:           log,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(f.host, strconv.Itoa(f.port)))
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	log.Info("serving", "addr", ln.Addr().String(), "model", f.mf.model, "dir", m.Dir,
		"served_model_names", names, "lora_modules", len(adapters), "max_model_len", m.MaxModelLen, "max_prompt_bytes", f.rf.maxPromptBytes, "engines", []string(f.ef.engines),
		"version", vrenderVersion())
	return server.Serve(ctx, ln, h, server.ServeOptions{Logger: log, ShutdownTimeout: f.sec.shutdownTimeout})
}

// serveFlags are serve's flags: the shared groups and serve's own.
type serveFlags struct {
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
	// imageCacheGCHeadroom: GOGC's ratio over the heap outside the
	// processed-image cache, at least this many bytes (internal/gcpace);
	// -1: Go's own pacing.
	imageCacheGCHeadroom int64
}

// command registers the flags, in the order --help lists them.
func (f *serveFlags) command() *command {
	c := newCommand("serve", "[MODEL] [options]",
		"Serve the HTTP API (vLLM's render tier: /v1/chat/completions/render, /v1/completions/render,\n"+
			"/v1/messages/render, /v1/responses/render, /v1/chat/completions/derender, /v1/completions/derender,\n"+
			"/v1/messages/count_tokens, /tokenize, /detokenize, /v1/models, /health, /version, /metrics) and,\n"+
			"with --engine, OpenAI's\n"+
			"/v1/chat/completions, /v1/completions and /v1/responses and Anthropic's /v1/messages\n"+
			"over tokens-only engines (--engine sim: the in-process simulated engine)\n"+
			"for MODEL, a local directory in Hugging Face layout or a model ID in the HF cache.\n"+
			"MODEL may come before or after the options, or be given with --model.")
	f.mf.register(c, true)
	f.rf.register(c)
	f.df.register(c)
	f.ef.register(c)
	f.lf.register(c)
	c.fs.StringVar(&f.host, "host", "", "`HOST` address to listen on (default: all interfaces)")
	c.fs.IntVar(&f.port, "port", 8000, "`PORT` to listen on")
	c.fs.Var(&f.servedNames, "served-model-name", "`NAME`s clients may use in \"model\"; the first is the one reported (default: MODEL)")
	c.multi["served-model-name"] = true
	c.fs.StringVar(&f.stateKey, "state-key", "", "`KEY` (hex, or raw bytes; at least 16 bytes) signing the streaming derender checkpoints\n"+
		"in stream_state (default: env VRENDER_STATE_KEY; if neither is set, a random key per process,\n"+
		"so only this process can resume a checkpoint: give every replica the same key)")

	c.fs.Int64Var(&f.tokCache, "tokenizer-cache-size", tokenizer.DefaultSegmentCacheBytes,
		"`BYTES` bounding the cache of token ids of the text between special tokens, so a conversation\n"+
			"re-rendered each turn encodes only its new messages (0: off)")
	c.fs.Int64Var(&f.imageCacheGCHeadroom, "image-cache-gc-headroom", defaultImageCacheGCHeadroom,
		"`BYTES` of garbage the heap gathers between collections at least, with GOGC's ratio applied to the heap\n"+
			"outside the processed-image cache only, so a filled cache does not let as many bytes of garbage again\n"+
			"gather beside it (-1: GOGC over the whole heap, Go's own pacing)")
	f.sec.register(c)
	c.sections = serveHelpSections
	return c
}

// check takes MODEL from the positional arguments and checks the flags
// that need no model.
func (f *serveFlags) check(rest []string, log *slog.Logger) error {
	switch {
	case len(rest) > 1:
		return usagef("unexpected argument %q", rest[1])
	case len(rest) == 1 && f.mf.model != "" && f.mf.model != rest[0]:
		// vLLM lets the positional MODEL win; say so rather than guess silently.
		log.Warn("both MODEL and --model given; using MODEL", "model", rest[0], "ignored", f.mf.model)
		f.mf.model = rest[0]
	case len(rest) == 1:
		f.mf.model = rest[0]
	}
	if f.port < 0 || f.port > 65535 {
		return usagef("--port %d is out of range", f.port)
	}
	if err := f.rf.validate(); err != nil {
		return err
	}
	if err := f.sec.validate(); err != nil {
		return err
	}
	if f.tokCache < 0 {
		return usagef("--tokenizer-cache-size %d is negative", f.tokCache)
	}
	if f.imageCacheGCHeadroom < -1 {
		return usagef("--image-cache-gc-headroom %d: want bytes, or -1 for Go's own pacing", f.imageCacheGCHeadroom)
	}
	return nil
}

// setStateKey gives der the key signing its stream_state checkpoints:
// --state-key, else VRENDER_STATE_KEY, else (with a warning) the random
// key der made for this process.
func setStateKey(der *derender.Engine, stateKey string, log *slog.Logger) error {
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
	return nil
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
		"image-cache-gc-headroom", "media-io-kwargs", "image-memory-budget", "enable-mm-embeds"}},
	{"LoRA adapters", []string{"enable-lora", "lora-modules"}},
	{"HTTP server, API keys and limits", []string{"host", "port", "api-key", "max-request-body-bytes",
		"max-messages", "max-tools", "max-prompt-bytes", "max-derender-tokens", "shutdown-timeout"}},
	{"Logging and tracing", []string{"enable-log-requests", "disable-uvicorn-access-log", "otlp-traces-endpoint"}},
	{"Engines (with them: /v1/chat/completions, /v1/completions, /v1/responses, /v1/messages)", []string{
		"engine", "prefill-engine", "decode-engine", "engine-config", "engine-api-key",
		"engine-health-interval", "engine-health-timeout", "engine-eject-after", "engine-eject-window",
		"engine-first-event-timeout", "engine-timeout", "engine-request-timeout", "engine-metrics-interval",
		"engine-mm-cache-gb"}},
	{"Routing among engines", []string{"routing", "routing-prefix-weight", "routing-load-weight",
		"routing-queue-weight", "kv-block-size", "kv-events-endpoint", "kv-events-topic", "prefix-index-blocks",
		"prefix-predict-ttl"}},
	{"Simulated engine (--engine sim)", []string{"sim-script", "sim-token-latency", "sim-logprobs-shape",
		"sim-num-gpu-blocks-override", "sim-block-size", "sim-prefill-token-latency",
		"sim-enable-prompt-tokens-details", "sim-kv-events-config"}},
}

// defaultImageCacheGCHeadroom is --image-cache-gc-headroom's default:
// many requests' garbage, so the collector does not run once per request
// beside a full cache. The cache keeps resized pixels, not answers, so a
// request leaves its own buffers (request body, decoded data URL, resize
// scratch: about 1 MB for a 1280x720 JPEG, 0.35 MB for a hit) and, once
// the cache is full, the entry a new picture evicts (2.8 MB at 1280x720);
// a request of four new 1080p JPEGs allocates 30 MB, 25 of it their
// resized pixels (runtime.MemStats over 40 and 10 requests in process,
// 2026-12-07). 256 MiB is about 70 new 1280x720 pictures.
const defaultImageCacheGCHeadroom = 256 << 20

// imageCacheBytes reports what r's processed-image cache holds: values
// without pointers, which need no headroom in proportion to them.
func imageCacheBytes(r *render.Renderer) func() uint64 {
	return func() uint64 { return uint64(max(r.ImageCacheStats().Bytes, 0)) }
}
