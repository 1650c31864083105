package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/vrender/vrender/enginesim"
	"github.com/vrender/vrender/kvevents"
	"github.com/vrender/vrender/server"
)

// runEngineSim is `vrender engine-sim`: a simulated tokens-only vLLM engine
// (POST /inference/v1/generate) for a model's tokenizer, until ctx is done.
func runEngineSim(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommand("engine-sim", "--model MODEL [options]",
		"Serve a simulated tokens-only vLLM engine (vllm serve MODEL --tokens-only): POST /inference/v1/generate,\n"+
			"/inference/v1/abort_requests, /abort_requests, /health and /v1/models, answering with scripted outputs\n"+
			"or a built-in reasoning-model imitation, with configurable latency and injected faults.")
	var (
		mf          modelFlags
		host        string
		port        int
		servedName  string
		script      string
		firstToken  time.Duration
		perToken    time.Duration
		fault       string
		faultAfter  int
		faultRate   float64
		maxNumSeqs  int
		logLevelDbg bool
		kvRole      string
		kvLatency   time.Duration
		serial      bool
		lpShape     string
		cacheBlocks int
		blockSize   int
		prefillTok  time.Duration
		ptDetails   bool
		kvEvents    string
	)
	mf.register(c, true)
	c.fs.StringVar(&host, "host", "", "`HOST` address to listen on (default: all interfaces)")
	c.fs.IntVar(&port, "port", 8000, "`PORT` to listen on")
	c.fs.StringVar(&servedName, "served-model-name", "", "the model `NAME` the engine reports and accepts (default: MODEL)")
	c.fs.StringVar(&script, "script", "", "JSONL or JSON list `FILE` of scripted outputs (see the enginesim package docs)")
	c.fs.DurationVar(&firstToken, "first-token-latency", 0, "time to first token, a Go `DURATION` such as 200ms")
	c.fs.DurationVar(&perToken, "token-latency", 0, "`DURATION` between tokens")
	c.fs.StringVar(&fault, "fault", "", "inject a `KIND` of fault: refuse, 500, drop or stall")
	c.fs.IntVar(&faultAfter, "fault-after", 0, "events sent before the fault strikes (`N`)")
	c.fs.Float64Var(&faultRate, "fault-rate", 0, "probability `R` that a request gets the fault (0 = every request)")
	c.fs.IntVar(&maxNumSeqs, "max-num-seqs", 256, "vLLM's max_num_seqs `N`: requests with a larger n are refused")
	c.fs.BoolVar(&logLevelDbg, "debug", false, "log every request")
	c.fs.StringVar(&kvRole, "kv-role", enginesim.KVRoleBoth, "`ROLE` in disaggregated serving: producer (prefill engine: only prefill requests,\n"+
		"answered with kv_transfer_params), consumer (decode engine: only requests carrying a producer's\n"+
		"kv_transfer_params) or both (every request, parameters unchecked)")
	c.fs.DurationVar(&kvLatency, "kv-transfer-latency", 0, "first-token `DURATION` of a decode whose KV cache comes from a prefill engine\n"+
		"(default: --token-latency)")
	c.fs.StringVar(&lpShape, "logprobs-shape", enginesim.LogprobsShapeOpenAI, "`SHAPE` of output logprobs: openai (what vLLM's generate writes today: \"token_id:N\"\n"+
		"placeholders with bytes null) or generate (GenerateLogProbs {token_id, logprob, rank}, vllm PR #58181)")
	c.fs.BoolVar(&serial, "serial-prefill", false, "run prefills (--first-token-latency) one at a time and stall decoding while one runs,\n"+
		"as a batch-at-a-time engine does: the interference disaggregated serving removes")

	c.fs.IntVar(&cacheBlocks, "num-gpu-blocks-override", 0, "KV cache capacity in blocks (`N`) of the simulated automatic prefix cache\n"+
		"(an LRU of full blocks, evicted tail first); 0: no prefix cache")
	c.fs.IntVar(&blockSize, "block-size", 16, "KV cache block size in tokens (`N`)")
	c.fs.DurationVar(&prefillTok, "prefill-token-latency", 0, "`DURATION` added to the first-token latency per prompt token the prefix cache\n"+
		"does not hold (every token without one), e.g. 50us")
	c.fs.BoolVar(&ptDetails, "enable-prompt-tokens-details", false, "report usage.prompt_tokens_details.cached_tokens")
	c.fs.StringVar(&kvEvents, "kv-events-config", "", "vLLM's KVEventsConfig `JSON`, e.g. {\"enable_kv_cache_events\":true,\"publisher\":\"zmq\",\n"+
		"\"endpoint\":\"tcp://*:5557\",\"replay_endpoint\":\"tcp://*:5558\"}: the prefix cache's changes published as vLLM's\n"+
		"KV events (BlockStored, BlockRemoved, AllBlocksCleared; needs --num-gpu-blocks-override)")

	rest, err := c.parse(args, stdout)
	if err != nil {
		return err
	}
	switch {
	case len(rest) > 1:
		return usagef("unexpected argument %q", rest[1])
	case len(rest) == 1:
		mf.model = rest[0]
	}
	if port < 0 || port > 65535 {
		return usagef("--port %d is out of range", port)
	}
	if maxNumSeqs < 1 {
		return usagef("--max-num-seqs must be at least 1")
	}
	f := enginesim.Fault{Kind: fault, AfterTokens: faultAfter, Rate: faultRate}
	if err := f.Validate(); err != nil {
		return usagef("--fault: %v", err)
	}
	if err := enginesim.ValidateLogprobsShape(lpShape); err != nil {
		return usagef("--logprobs-shape: %v", err)
	}
	if err := enginesim.ValidateKVRole(kvRole); err != nil {
		return usagef("--kv-role: %v", err)
	}
	if cacheBlocks < 0 || blockSize < 1 {
		return usagef("--num-gpu-blocks-override must not be negative and --block-size must be at least 1")
	}
	if firstToken < 0 || perToken < 0 || kvLatency < 0 || prefillTok < 0 {
		return usagef("latencies must not be negative")
	}
	level := slog.LevelInfo
	if logLevelDbg {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	m, err := mf.load(ctx)
	if err != nil {
		return err
	}
	cfg := enginesim.Config{
		ServedModelName:   servedName,
		FirstTokenLatency: firstToken,
		TokenLatency:      perToken,
		Fault:             f,
		MaxNumSeqs:        maxNumSeqs,
		Logger:            log,
		KVRole:            kvRole,
		KVTransferLatency: kvLatency,
		SerialPrefill:     serial,
		LogprobsShape:     lpShape,

		PrefixCacheBlocks:         cacheBlocks,
		BlockSize:                 blockSize,
		PrefillTokenLatency:       prefillTok,
		EnablePromptTokensDetails: ptDetails,
	}
	if script != "" {
		if cfg.Script, err = enginesim.LoadScript(script, m.Tokenizer); err != nil {
			return err
		}
	}
	if kvEvents != "" {
		pub, err := startKVEventPublisher(kvEvents, cacheBlocks, log)
		if err != nil {
			return err
		}
		if pub != nil {
			defer pub.Close()
			cfg.KVEvents = pub
		}
	}
	sim, err := enginesim.New(m, cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	name := servedName
	if name == "" {
		name = mf.model
	}
	log.Info("simulated engine serving", "addr", ln.Addr().String(), "model", name, "script", script,
		"first_token_latency", firstToken, "token_latency", perToken, "fault", fault,
		"kv_role", kvRole, "serial_prefill", serial, "prefix_cache_blocks", cacheBlocks, "block_size", blockSize,
		"prefill_token_latency", prefillTok)
	return server.Serve(ctx, ln, sim.Handler(), server.ServeOptions{Logger: log})
}

// kvEventsConfig is vLLM's KVEventsConfig (vllm/config/kv_events.py).
type kvEventsConfig struct {
	EnableKVCacheEvents bool    `json:"enable_kv_cache_events"`
	Publisher           *string `json:"publisher"`
	Endpoint            *string `json:"endpoint"`
	ReplayEndpoint      *string `json:"replay_endpoint"`
	BufferSteps         *int    `json:"buffer_steps"`
	HWM                 *int    `json:"hwm"`
	MaxQueueSize        *int    `json:"max_queue_size"`
	Topic               string  `json:"topic"`
}

// startKVEventPublisher parses --kv-events-config and binds the publisher;
// nil when events are disabled (publisher null or events off).
func startKVEventPublisher(text string, cacheBlocks int, log *slog.Logger) (*kvevents.Publisher, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	var c kvEventsConfig
	if err := dec.Decode(&c); err != nil {
		return nil, usagef("--kv-events-config: %v", err)
	}
	publisher := "null"
	if c.EnableKVCacheEvents {
		publisher = "zmq" // vLLM's __post_init__ default
	}
	if c.Publisher != nil {
		publisher = *c.Publisher
	}
	switch {
	case publisher != "zmq" && publisher != "null":
		return nil, usagef("--kv-events-config: publisher %q: want zmq or null", publisher)
	case !c.EnableKVCacheEvents || publisher == "null":
		return nil, nil
	case cacheBlocks == 0:
		return nil, usagef("--kv-events-config needs a prefix cache (--num-gpu-blocks-override N)")
	}
	cfg := kvevents.PublisherConfig{Endpoint: "tcp://*:5557", Topic: c.Topic, Logger: log}
	if c.Endpoint != nil {
		cfg.Endpoint = *c.Endpoint
	}
	if c.ReplayEndpoint != nil {
		cfg.ReplayEndpoint = *c.ReplayEndpoint
	}
	if c.BufferSteps != nil {
		cfg.BufferSteps = *c.BufferSteps
	}
	if !strings.HasPrefix(cfg.Endpoint, "tcp://") || (cfg.ReplayEndpoint != "" && !strings.HasPrefix(cfg.ReplayEndpoint, "tcp://")) {
		return nil, usagef("--kv-events-config: the simulated engine binds tcp:// endpoints only")
	}
	pub, err := kvevents.NewPublisher(cfg)
	if err != nil {
		return nil, err
	}
	log.Info("KV events published", "endpoint", cfg.Endpoint, "replay_endpoint", cfg.ReplayEndpoint, "topic", cfg.Topic)
	return pub, nil
}
