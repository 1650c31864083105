package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/enginesim"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/orchestrator"
	"github.com/vrender/vrender/orchestrator/engine"
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/render"
)

// engineFlags are serve's orchestrator flags: which tokens-only engines
// answer /v1/chat/completions and /v1/completions.
type engineFlags struct {
	engines      stringList
	simScript    string
	simLatency   time.Duration
	engineTimout time.Duration
	engineAPIKey string
}

func (f *engineFlags) register(c *command) {
	c.fs.Var(&f.engines, "engine", "tokens-only engine `URL` (vllm serve --tokens-only) serving /v1/chat/completions and\n"+
		"/v1/completions; repeat for several (round-robin). \"sim\" starts the simulated engine in-process.\n"+
		"Without --engine those endpoints answer 503")
	c.multi["engine"] = true
	c.fs.StringVar(&f.simScript, "sim-script", "", "script `FILE` of the simulated engine's answers (--engine sim; default: built-in)")
	c.fs.DurationVar(&f.simLatency, "sim-token-latency", 0, "per-token `DURATION` of the simulated engine (--engine sim), e.g. 20ms")
	c.fs.DurationVar(&f.engineTimout, "engine-timeout", 60*time.Second,
		"longest silence (`DURATION`) between two events of an engine stream before the request fails with 504")
	c.fs.StringVar(&f.engineAPIKey, "engine-api-key", "", "`KEY` sent to the engines as a bearer token (their --api-key)")
}

// orchestrator builds the orchestrator, starting the in-process simulated
// engine for "sim"; it returns nil when no engine is configured. The
// returned stop function shuts the simulator down.
func (f *engineFlags) orchestrator(ctx context.Context, m *model.Model, gen *render.Generator, der *derender.Engine,
	rf *renderFlags, modelName string, log *slog.Logger) (*orchestrator.Orchestrator, func(), error) {
	stop := func() {}
	if len(f.engines) == 0 {
		if f.simScript != "" || f.simLatency != 0 {
			return nil, stop, usagef("--sim-script and --sim-token-latency need --engine sim")
		}
		return nil, stop, nil
	}
	if f.engineTimout <= 0 {
		return nil, stop, usagef("--engine-timeout must be positive, got %s", f.engineTimout)
	}
	var clients []*engine.Client
	var stops []func()
	stop = func() {
		for _, s := range stops {
			s()
		}
	}
	for _, url := range f.engines {
		if url == "sim" {
			u, shutdown, err := f.startSim(ctx, m, modelName, log)
			if err != nil {
				stop()
				return nil, func() {}, err
			}
			stops = append(stops, shutdown)
			url = u
		}
		c, err := engine.New(url, engine.Options{APIKey: f.engineAPIKey, IdleTimeout: f.engineTimout, Logger: log})
		if err != nil {
			stop()
			return nil, func() {}, usagef("--engine %s: %v", url, err)
		}
		clients = append(clients, c)
	}
	picker, err := orchestrator.NewRoundRobin(clients...)
	if err != nil {
		stop()
		return nil, func() {}, err
	}
	o, err := orchestrator.New(orchestrator.Config{Model: m, Generator: gen, Derender: der, Engines: picker,
		Parsers: parsers.Config{ReasoningParser: rf.reasoningParser, ToolParser: rf.toolCallParser,
			EnableAutoToolChoice: rf.enableAutoToolChoice},
		ModelName: modelName, Logger: log})
	if err != nil {
		stop()
		return nil, func() {}, err
	}
	return o, stop, nil
}

// startSim serves the simulated engine on a loopback port and returns its
// base URL.
func (f *engineFlags) startSim(ctx context.Context, m *model.Model, modelName string, log *slog.Logger) (string, func(), error) {
	cfg := enginesim.Config{ServedModelName: modelName, TokenLatency: f.simLatency, Logger: log}
	if f.simScript != "" {
		s, err := enginesim.LoadScript(f.simScript, m.Tokenizer)
		if err != nil {
			return "", nil, fmt.Errorf("--sim-script: %w", err)
		}
		cfg.Script = s
	}
	sim, err := enginesim.New(m, cfg)
	if err != nil {
		return "", nil, fmt.Errorf("engine sim: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("engine sim: listen: %w", err)
	}
	srv := &http.Server{Handler: sim.Handler(), ReadHeaderTimeout: 30 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("engine sim stopped", "err", err)
		}
	}()
	url := "http://" + ln.Addr().String()
	log.Info("simulated engine started", "url", url, "token_latency", f.simLatency, "script", f.simScript)
	return url, func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}, nil
}
