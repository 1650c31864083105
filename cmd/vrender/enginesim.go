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
	var f engineSimFlags
	f.register(c)
	rest, err := c.parse(args, stdout)
	if err != nil {
		return err
	}
	fault, err := f.validate(rest)
	if err != nil {
		return err
	}
	level := slog.LevelInfo
	if f.logLevelDbg {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	name := f.servedName
	if name == "" {
		name = f.mf.model
	}
	adapters, err := f.lora.adapters([]string{name})
	if err != nil {
		return err
	}
	m, err := f.mf.load(ctx)
	if err != nil {
		return err
	}
	cfg := enginesim.Config{
		ServedModelName:   f.servedName,
		LoRAModules:       adapters,
		FirstTokenLatency: f.firstToken,
		TokenLatency:      f.perToken,
		Fault:             fault,
		MaxNumSeqs:        f.maxNumSeqs,
		Logger:            log,
		KVRole:            f.kvRole,
		KVTransferLatency: f.kvLatency,
		SerialPrefill:     f.serial,
		LogprobsShape:     f.lpShape,
	}
	if cfg.MMProcessorCacheBytes, err = cacheBytesFromGB(f.mmCacheGB); err != nil {
		return err
	}
	if cfg.MMProcessorCacheBytes == 0 {
		cfg.MMProcessorCacheBytes = -1 // no cache (the Config's 0 is the default)
	}
	f.cache.apply(&cfg)
	if f.script != "" {
		if cfg.Script, err = enginesim.LoadScript(f.script, m.Tokenizer); err != nil {
			return err
		}
	}
	pub, _, err := f.cache.publisher(log, false)
	if err != nil {
		return err
	}
	if pub != nil {
		defer pub.Close()
		cfg.KVEvents = pub
	}
	sim, err := enginesim.New(m, cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(f.host, strconv.Itoa(f.port)))
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	log.Info("simulated engine serving", "addr", ln.Addr().String(), "model", name, "lora_modules", adapterNames(adapters), "script", f.script,
		"first_token_latency", f.firstToken, "token_latency", f.perToken, "fault", f.fault,
		"kv_role", f.kvRole, "serial_prefill", f.serial, "prefix_cache_blocks", f.cache.cacheBlocks, "block_size", f.cache.blockSize,
		"prefill_token_latency", f.cache.prefillTok)
	return server.Serve(ctx, ln, sim.Handler(), server.ServeOptions{Logger: log})
}

// engineSimFlags are the flags of vrender engine-sim.
type engineSimFlags struct {
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
	mmCacheGB   float64
	cache       simCacheFlags
	lora        loraFlags
}

func (f *engineSimFlags) register(c *command) {
	f.mf.register(c, true)
	c.fs.StringVar(&f.host, "host", "", "`HOST` address to listen on (default: all interfaces)")
	c.fs.IntVar(&f.port, "port", 8000, "`PORT` to listen on")
	c.fs.StringVar(&f.servedName, "served-model-name", "", "the model `NAME` the engine reports and accepts (default: MODEL)")
	c.fs.StringVar(&f.script, "script", "", "JSONL or JSON list `FILE` of scripted outputs (see the enginesim package docs)")
	c.fs.DurationVar(&f.firstToken, "first-token-latency", 0, "time to first token, a Go `DURATION` such as 200ms")
	c.fs.DurationVar(&f.perToken, "token-latency", 0, "`DURATION` between tokens")
	c.fs.StringVar(&f.fault, "fault", "", "inject a `KIND` of fault: refuse, 500, drop or stall")
	c.fs.IntVar(&f.faultAfter, "fault-after", 0, "events sent before the fault strikes (`N`)")
	c.fs.Float64Var(&f.faultRate, "fault-rate", 0, "probability `R` that a request gets the fault (0 = every request)")
	c.fs.IntVar(&f.maxNumSeqs, "max-num-seqs", 256, "vLLM's max_num_seqs `N`: requests with a larger n are refused")
	c.fs.BoolVar(&f.logLevelDbg, "debug", false, "log every request")
	c.fs.StringVar(&f.kvRole, "kv-role", enginesim.KVRoleBoth, "`ROLE` in disaggregated serving: producer (prefill engine: only prefill requests,\n"+
		"answered with kv_transfer_params), consumer (decode engine: only requests carrying a producer's\n"+
		"kv_transfer_params) or both (every request, parameters unchecked)")
	c.fs.DurationVar(&f.kvLatency, "kv-transfer-latency", 0, "first-token `DURATION` of a decode whose KV cache comes from a prefill engine\n"+
		"(default: --token-latency)")
	c.fs.StringVar(&f.lpShape, "logprobs-shape", enginesim.LogprobsShapeOpenAI, "`SHAPE` of output logprobs: openai (what vLLM's generate writes today: \"token_id:N\"\n"+
		"placeholders with bytes null) or generate (GenerateLogProbs {token_id, logprob, rank}, vllm PR #58181)")
	c.fs.BoolVar(&f.serial, "serial-prefill", false, "run prefills (--first-token-latency) one at a time and stall decoding while one runs,\n"+
		"as a batch-at-a-time engine does: the interference disaggregated serving removes")

	c.fs.Float64Var(&f.mmCacheGB, "mm-processor-cache-gb", 4, "`GB` of multimodal items kept under their mm_hash, as vLLM's engine keeps them,\n"+
		"so a request may send an item's kwargs as null; 0: none, every null item fails its request")
	f.cache.register(c, "")
	f.lora.register(c)
}

// validate checks the flags and the arguments left after them (the model
// may be given as the one argument, as vllm serve takes it) and returns
// the fault to inject.
func (f *engineSimFlags) validate(rest []string) (enginesim.Fault, error) {
	switch {
	case len(rest) > 1:
		return enginesim.Fault{}, usagef("unexpected argument %q", rest[1])
	case len(rest) == 1:
		f.mf.model = rest[0]
	}
	if f.port < 0 || f.port > 65535 {
		return enginesim.Fault{}, usagef("--port %d is out of range", f.port)
	}
	if f.maxNumSeqs < 1 {
		return enginesim.Fault{}, usagef("--max-num-seqs must be at least 1")
	}
	fault := enginesim.Fault{Kind: f.fault, AfterTokens: f.faultAfter, Rate: f.faultRate}
	if err := fault.Validate(); err != nil {
		return enginesim.Fault{}, usagef("--fault: %v", err)
	}
	if err := enginesim.ValidateLogprobsShape(f.lpShape); err != nil {
		return enginesim.Fault{}, usagef("--logprobs-shape: %v", err)
	}
	if err := enginesim.ValidateKVRole(f.kvRole); err != nil {
		return enginesim.Fault{}, usagef("--kv-role: %v", err)
	}
	if err := f.cache.validate(); err != nil {
		return enginesim.Fault{}, err
	}
	if f.firstToken < 0 || f.perToken < 0 || f.kvLatency < 0 {
		return enginesim.Fault{}, usagef("latencies must not be negative")
	}
	return fault, nil
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

// parseKVEventsConfig reads --kv-events-config into a publisher's
// configuration; on is false when events are disabled (publisher null or
// events off). flag spells a flag's name for errors.
func parseKVEventsConfig(text string, cacheBlocks int, flag func(string) string) (cfg kvevents.PublisherConfig, on bool, err error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	var c kvEventsConfig
	if err := dec.Decode(&c); err != nil {
		return cfg, false, usagef("%s: %v", flag("kv-events-config"), err)
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
		return cfg, false, usagef("%s: publisher %q: want zmq or null", flag("kv-events-config"), publisher)
	case !c.EnableKVCacheEvents || publisher == "null":
		return cfg, false, nil
	case cacheBlocks == 0:
		return cfg, false, usagef("%s needs a prefix cache (%s N)", flag("kv-events-config"), flag("num-gpu-blocks-override"))
	}
	cfg = kvevents.PublisherConfig{Endpoint: "tcp://*:5557", Topic: c.Topic}
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
		return cfg, false, usagef("%s: the simulated engine binds tcp:// endpoints only", flag("kv-events-config"))
	}
	return cfg, true, nil
}
