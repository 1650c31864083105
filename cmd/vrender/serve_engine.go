package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/enginesim"
	"github.com/vrender/vrender/fleet"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/orchestrator"
	"github.com/vrender/vrender/orchestrator/engine"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
)

// engineFlags are serve's orchestrator flags: which tokens-only engines
// answer /v1/chat/completions and /v1/completions, in a collocated pool
// (--engine) or a prefill/decode pool (--prefill-engine, --decode-engine),
// given as flags or in an --engine-config file.
type engineFlags struct {
	// simKeys are the server's --api-key values: the in-process simulated
	// engines demand one too, so their loopback port is no open door.
	simKeys []string
	// servedNames are serve's --served-model-name values (or MODEL): a
	// request's "model" naming none of them asks for a LoRA adapter.
	servedNames []string
	// adapters are serve's --lora-modules: the orchestrator reports an
	// adapter request's model as the adapter, and in-process engines
	// serve them.
	adapters                 []protocol.LoRAModulePath
	engines, prefill, decode stringList
	config                   string
	healthInterval           setDuration
	healthTimeout            setDuration
	ejectAfter               setInt
	simScript                string
	simLogprobsShape         string
	simLatency               time.Duration
	simCache                 simCacheFlags
	engineTimout             time.Duration
	engineMMCacheGB          float64
	firstEventTimeout        time.Duration
	requestTimeout           time.Duration
	ejectWindow              setDuration
	engineAPIKey             string
	routing                  routingFlags
}

// setDuration and setInt are flags that remember whether they were given,
// so that a given flag overrides the config file and an absent one does
// not.
type setDuration struct {
	set bool
	v   time.Duration
}

func (d *setDuration) String() string { return d.v.String() }
func (d *setDuration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	d.set, d.v = true, v
	return nil
}

type setInt struct {
	set bool
	v   int
}

func (n *setInt) String() string { return strconv.Itoa(n.v) }
func (n *setInt) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("not an integer: %q", s)
	}
	n.set, n.v = true, v
	return nil
}

func (f *engineFlags) register(c *command) {
	c.fs.Var(&f.engines, "engine", "tokens-only engine `URL` (vllm serve --tokens-only) serving /v1/chat/completions and\n"+
		"/v1/completions; repeat for several (a collocated pool: least outstanding requests, health checks,\n"+
		"ejection). \"sim\" starts the simulated engine in-process. Without engines those endpoints answer 503")
	c.multi["engine"] = true
	c.fs.Var(&f.prefill, "prefill-engine", "prefill engine `URL` (kv_role kv_producer) of a disaggregated pool; repeatable;\n"+
		"needs --decode-engine. \"sim\" starts a simulated producer in-process")
	c.multi["prefill-engine"] = true
	c.fs.Var(&f.decode, "decode-engine", "decode engine `URL` (kv_role kv_consumer) of a disaggregated pool; repeatable;\n"+
		"needs --prefill-engine. \"sim\" starts a simulated consumer in-process")
	c.multi["decode-engine"] = true
	c.fs.StringVar(&f.config, "engine-config", "", "YAML `FILE` of engine pools, health settings and the engines' API key\n"+
		"(see fleet.EngineConfig); health flags given on the command line override it")
	f.healthInterval.v = 5 * time.Second
	c.fs.Var(&f.healthInterval, "engine-health-interval", "period (`DURATION`) of the engines' GET /health checks; negative disables\n"+
		"checks and ejection (default 5s)")
	f.healthTimeout.v = 2 * time.Second
	c.fs.Var(&f.healthTimeout, "engine-health-timeout", "`DURATION` one health check may take (default 2s)")
	f.ejectAfter.v = 3
	c.fs.Var(&f.ejectAfter, "engine-eject-after", "eject an engine after `N` consecutive failures (unreachable, 5xx, broken stream, timeout,\n"+
		"failed health check) until a recovery probe passes (probes back off from the health interval to 16x it);\n"+
		"a pool never ejects its last admitted engine; negative never ejects (default 3)")
	c.fs.StringVar(&f.simScript, "sim-script", "", "script `FILE` of the simulated engine's answers (--engine sim; default: built-in)")
	c.fs.DurationVar(&f.simLatency, "sim-token-latency", 0, "per-token `DURATION` of the simulated engine (--engine sim), e.g. 20ms")
	f.simCache.register(c, "sim-")
	c.fs.StringVar(&f.simLogprobsShape, "sim-logprobs-shape", enginesim.LogprobsShapeOpenAI, "`SHAPE` of the simulated engine's logprobs (--engine sim):\n"+
		"openai (vLLM's generate today) or generate (GenerateLogProbs, vllm PR #58181)")
	c.fs.Float64Var(&f.engineMMCacheGB, "engine-mm-cache-gb", 0,
		"the engines' --mm-processor-cache-gb (`GB`) when every engine runs vLLM's lru processor cache (its default type,\n"+
			"with one API server and one data-parallel rank or external load balancing): a picture an engine holds is then\n"+
			"sent to it as a null kwargs item, as vLLM's own front end sends it; an engine that lacks one gets the request\n"+
			"again with the data. 0 sends every picture's data (in-process --engine sim engines: always their 4)")
	c.fs.DurationVar(&f.engineTimout, "engine-timeout", 60*time.Second,
		"longest silence (`DURATION`) between two events of an engine stream before the request fails with 504")
	c.fs.DurationVar(&f.firstEventTimeout, "engine-first-event-timeout", 60*time.Second,
		"longest wait (`DURATION`) from sending a request to an engine's first event (queueing and prefill included)\n"+
			"before the request fails with 504, the engine request is aborted and the failure counts against the engine")
	c.fs.DurationVar(&f.requestTimeout, "engine-request-timeout", 0,
		"longest `DURATION` of a whole engine request before it fails with 504 and is aborted (0: no limit)")
	f.ejectWindow.v = 10 * time.Second
	c.fs.Var(&f.ejectWindow, "engine-eject-window", "failures count as consecutive only when each comes within `DURATION`\n"+
		"of the one before (default 10s)")
	c.fs.StringVar(&f.engineAPIKey, "engine-api-key", "", "`KEY` sent to the engines as a bearer token (their --api-key)")
	f.routing.register(c)
}

// enginePlan is the pools to build, from the flags and the config file.
type enginePlan struct {
	collocated, prefill, decode []string
	health                      fleet.HealthConfig
	apiKey                      string
}

func (f *engineFlags) plan() (*enginePlan, error) {
	p := &enginePlan{collocated: f.engines, prefill: f.prefill, decode: f.decode, apiKey: f.engineAPIKey,
		health: fleet.HealthConfig{Interval: f.healthInterval.v, Timeout: f.healthTimeout.v, EjectAfter: f.ejectAfter.v,
			EjectWindow: f.ejectWindow.v}}
	if f.config != "" {
		if len(f.engines)+len(f.prefill)+len(f.decode) > 0 {
			return nil, usagef("give engine URLs either in --engine-config or as --engine/--prefill-engine/--decode-engine, not both")
		}
		c, err := fleet.LoadEngineConfig(f.config)
		if err != nil {
			return nil, usagef("--engine-config: %v", err)
		}
		p.collocated, p.prefill, p.decode = c.Pools.Collocated, c.Pools.Prefill, c.Pools.Decode
		h := c.HealthConfig()
		if !f.healthInterval.set && h.Interval != 0 {
			p.health.Interval = h.Interval
		}
		if !f.healthTimeout.set && h.Timeout != 0 {
			p.health.Timeout = h.Timeout
		}
		if !f.ejectAfter.set && h.EjectAfter != 0 {
			p.health.EjectAfter = h.EjectAfter
		}
		if !f.ejectWindow.set && h.EjectWindow != 0 {
			p.health.EjectWindow = h.EjectWindow
		}
		if p.apiKey == "" {
			p.apiKey = c.APIKey
		}
	}
	switch {
	case len(p.collocated) > 0 && len(p.prefill)+len(p.decode) > 0:
		return nil, usagef("--engine (collocated) and --prefill-engine/--decode-engine (disaggregated) are exclusive")
	case len(p.prefill) > 0 != (len(p.decode) > 0):
		return nil, usagef("disaggregated serving needs both --prefill-engine and --decode-engine")
	case p.health.Interval == 0:
		return nil, usagef("--engine-health-interval must not be 0 (negative disables the checks)")
	case p.health.Timeout <= 0:
		return nil, usagef("--engine-health-timeout must be positive")
	case p.health.EjectAfter == 0:
		return nil, usagef("--engine-eject-after must not be 0 (negative never ejects)")
	}
	return p, nil
}

// orchestrator builds the orchestrator and starts its pools' health
// checks, starting the in-process simulated engines for "sim"; it returns
// nil when no engine is configured. The returned stop function ends the
// health checks and shuts the simulators down.
func (f *engineFlags) orchestrator(ctx context.Context, m *model.Model, gen *render.Generator, der *derender.Engine,
	rf *renderFlags, modelName string, log *slog.Logger) (*orchestrator.Orchestrator, func(), error) {
	noop := func() {}
	p, err := f.plan()
	if err != nil {
		return nil, noop, err
	}
	simFlags := f.simScript != "" || f.simLatency != 0 || f.simLogprobsShape != enginesim.LogprobsShapeOpenAI || f.simCache.set()
	if simFlags && !slices.Contains(slices.Concat(p.collocated, p.prefill, p.decode), "sim") {
		return nil, noop, usagef("--sim-* flags need --engine sim (or --prefill-engine/--decode-engine sim)")
	}
	if len(p.collocated)+len(p.prefill) == 0 {
		return nil, noop, nil
	}
	if err := f.simCache.validate(); err != nil {
		return nil, noop, err
	}
	if err := enginesim.ValidateLogprobsShape(f.simLogprobsShape); err != nil {
		return nil, noop, usagef("--sim-logprobs-shape: %v", err)
	}
	if f.engineTimout <= 0 {
		return nil, noop, usagef("--engine-timeout must be positive, got %s", f.engineTimout)
	}
	if b := f.engineMMCacheGB * (1 << 30); !(f.engineMMCacheGB >= 0) || b >= math.MaxInt64 {
		return nil, noop, usagef("--engine-mm-cache-gb must be a finite number greater than or equal to 0, got %v", f.engineMMCacheGB)
	}
	if f.firstEventTimeout <= 0 {
		return nil, noop, usagef("--engine-first-event-timeout must be positive, got %s", f.firstEventTimeout)
	}
	if f.requestTimeout < 0 {
		return nil, noop, usagef("--engine-request-timeout must not be negative, got %s", f.requestTimeout)
	}
	router, err := f.routing.router(append([]string{modelName}, f.servedNames...)...)
	if err != nil {
		return nil, noop, err
	}
	b := &poolBuilder{f: f, plan: p, ctx: ctx, m: m, modelName: modelName, log: log, kvRegistry: enginesim.NewKVRegistry(),
		router: router}
	engines, run, err := b.build()
	if err != nil {
		b.stop()
		return nil, noop, err
	}
	o, err := orchestrator.New(orchestrator.Config{Model: m, Generator: gen, Derender: der, Engines: engines,
		Parsers:   rf.parserConfig(m),
		ModelName: modelName, Adapters: adapterNames(f.adapters), Logger: log, Router: router})
	if err != nil {
		b.stop()
		return nil, noop, err
	}
	sources, err := f.routing.eventSources(append(append(append([]string(nil), p.collocated...), p.prefill...), p.decode...))
	if err != nil {
		b.stop()
		return nil, noop, err
	}
	if router.Policy() == fleet.RoutingPrefix {
		sources = append(sources, b.simEvents...) // the in-process engines' events, followed without flags
	}
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		if len(sources) > 0 {
			wg.Go(func() { _ = router.RunKVEvents(hctx, sources, log) })
		}
		run(hctx)
		wg.Wait()
	}()
	return o, func() {
		cancel()
		<-done
		b.stop()
	}, nil
}

// adapterNames are the adapters' names.
func adapterNames(adapters []protocol.LoRAModulePath) []string {
	names := make([]string, len(adapters))
	for i, l := range adapters {
		names[i] = l.Name
	}
	return names
}

// poolBuilder turns an enginePlan into pools.
type poolBuilder struct {
	f          *engineFlags
	plan       *enginePlan
	ctx        context.Context
	m          *model.Model
	modelName  string
	log        *slog.Logger
	kvRegistry *enginesim.KVRegistry // shared by the in-process producer and consumer sims
	router     *fleet.Router
	stops      []func()
	// simEvents are where the in-process engines publish KV events.
	simEvents []fleet.KVEventSource
}

func (b *poolBuilder) stop() {
	for _, s := range b.stops {
		s()
	}
	b.stops = nil
}

// build returns the pool and its health-check loop.
func (b *poolBuilder) build() (orchestrator.Engines, func(context.Context), error) {
	if len(b.plan.collocated) > 0 {
		pool, err := b.pool(fleet.RoleCollocated, b.plan.collocated)
		if err != nil {
			return nil, nil, err
		}
		b.log.Info("engine pool", "kind", "collocated", "engines", b.plan.collocated, "routing", b.router.Policy(), "health_interval", b.plan.health.Interval,
			"eject_after", b.plan.health.EjectAfter)
		return pool, pool.Run, nil
	}
	pre, err := b.pool(fleet.RolePrefill, b.plan.prefill)
	if err != nil {
		return nil, nil, err
	}
	dec, err := b.pool(fleet.RoleDecode, b.plan.decode)
	if err != nil {
		return nil, nil, err
	}
	pd, err := fleet.NewPD(pre, dec, b.log)
	if err != nil {
		return nil, nil, err
	}
	b.log.Info("engine pool", "kind", "prefill/decode", "prefill", b.plan.prefill, "decode", b.plan.decode, "routing", b.router.Policy(),
		"health_interval", b.plan.health.Interval, "eject_after", b.plan.health.EjectAfter)
	return pd, pd.Run, nil
}

func (b *poolBuilder) pool(role string, urls []string) (*fleet.Pool, error) {
	flag := map[string]string{fleet.RoleCollocated: "--engine", fleet.RolePrefill: "--prefill-engine",
		fleet.RoleDecode: "--decode-engine"}[role]
	var clients []*engine.Client
	for _, url := range urls {
		key := b.plan.apiKey
		mmCache := int64(b.f.engineMMCacheGB * (1 << 30))
		if url == "sim" {
			mmCache = simMMCacheBytes
			u, events, shutdown, err := b.f.startSim(b.ctx, b.m, b.modelName, b.log, simRole(role), b.kvRegistry)
			if err != nil {
				return nil, err
			}
			b.stops = append(b.stops, shutdown)
			url = u
			if events != nil {
				b.simEvents = append(b.simEvents, *events)
			}
			if len(b.f.simKeys) > 0 {
				key = b.f.simKeys[0]
			}
		}
		c, err := engine.New(url, engine.Options{APIKey: key, IdleTimeout: b.f.engineTimout, MMCacheBytes: mmCache,
			FirstEventTimeout: b.f.firstEventTimeout, TotalTimeout: b.f.requestTimeout, Logger: b.log})
		if err != nil {
			return nil, usagef("%s %s: %v", flag, url, err)
		}
		clients = append(clients, c)
	}
	router := b.router
	if role == fleet.RoleDecode && router.Policy() == fleet.RoutingPrefix {
		router = nil // the decode engine gets the KV cache from the prefill engine: chosen by load
	}
	pool, err := fleet.NewPool(fleet.PoolConfig{Role: role, Health: b.plan.health, Logger: b.log,
		Router: router, Queue: b.f.routing.queueConfig()}, clients...)
	if err != nil {
		return nil, usagef("%s: %v", flag, err)
	}
	return pool, nil
}

// simRole is the KV role of an in-process simulated engine in a pool.
func simRole(poolRole string) string {
	switch poolRole {
	case fleet.RolePrefill:
		return enginesim.KVRoleProducer
	case fleet.RoleDecode:
		return enginesim.KVRoleConsumer
	}
	return enginesim.KVRoleBoth
}

// simMMCacheBytes is the item cache of an in-process simulated engine:
// engine-sim's default, vLLM's 4 GiB.
const simMMCacheBytes = 4 << 30

// startSim serves the simulated engine on a loopback port and returns its
// base URL and, when it publishes KV events (--sim-kv-events-config),
// where.
func (f *engineFlags) startSim(ctx context.Context, m *model.Model, modelName string, log *slog.Logger,
	role string, reg *enginesim.KVRegistry) (string, *fleet.KVEventSource, func(), error) {
	cfg := enginesim.Config{ServedModelName: modelName, ServedModelAliases: f.servedNames, LoRAModules: f.adapters, TokenLatency: f.simLatency, Logger: log, KVRole: role, KVRegistry: reg,
		LogprobsShape: f.simLogprobsShape, APIKeys: f.simKeys}
	f.simCache.apply(&cfg)
	if f.simScript != "" {
		s, err := enginesim.LoadScript(f.simScript, m.Tokenizer)
		if err != nil {
			return "", nil, nil, fmt.Errorf("--sim-script: %w", err)
		}
		cfg.Script = s
	}
	pub, pcfg, err := f.simCache.publisher(log, true)
	if err != nil {
		return "", nil, nil, err
	}
	closePub := func() {
		if pub != nil {
			_ = pub.Close()
		}
	}
	if pub != nil {
		cfg.KVEvents = pub
	}
	sim, err := enginesim.New(m, cfg)
	if err != nil {
		closePub()
		return "", nil, nil, fmt.Errorf("engine sim: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		closePub()
		return "", nil, nil, fmt.Errorf("engine sim: listen: %w", err)
	}
	srv := &http.Server{Handler: sim.Handler(), ReadHeaderTimeout: 30 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("engine sim stopped", "err", err)
		}
	}()
	url := "http://" + ln.Addr().String()
	log.Info("simulated engine started", "url", url, "kv_role", role, "token_latency", f.simLatency, "script", f.simScript,
		"prefix_cache_blocks", f.simCache.cacheBlocks, "prefill_token_latency", f.simCache.prefillTok)
	var events *fleet.KVEventSource
	if pub != nil {
		events = &fleet.KVEventSource{Engine: url, Endpoint: pcfg.Endpoint, ReplayEndpoint: pcfg.ReplayEndpoint, Topic: pcfg.Topic}
	}
	return url, events, func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		closePub()
	}, nil
}
