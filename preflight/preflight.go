// Package preflight checks, before vrender takes traffic, that the engines
// it will drive are fit for it: each engine's vLLM version, one short
// request end to end (vrender's render, the engine or a prefill->decode
// pair, vrender's derender), then long prompts one at a time while the
// engines' NIXL KV-transfer metrics are read before and after. It stops at
// the first failing check and says what to fix.
package preflight

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/orchestrator/engine"
	"github.com/vrender/vrender/render"
)

// Config says which engines to check and how vrender renders for them.
type Config struct {
	// Engine is a collocated engine's base URL; or set both PrefillEngine
	// and DecodeEngine for disaggregated serving.
	Engine                      string
	PrefillEngine, DecodeEngine string
	// APIKey is sent to the engines as a bearer token.
	APIKey string
	// ModelName is the "model" the engines serve.
	ModelName string
	Generator *render.Generator
	Derender  *derender.Engine
	// LongPrompts long prompts of about LongPromptTokens tokens each are
	// sent one at a time after the short request.
	LongPrompts, LongPromptTokens int
	// RequestTimeout bounds each engine request (default 5m: a long
	// prompt's prefill on a busy engine is slow).
	RequestTimeout time.Duration
	// MinVersion is the oldest acceptable engine (default MinVersion).
	MinVersion *Version
	// HTTPClient makes the /version and /metrics calls (default: a
	// client with a 30s timeout).
	HTTPClient *http.Client
	Logger     *slog.Logger
}

// Disaggregated reports whether the config names a prefill/decode pair.
func (c *Config) Disaggregated() bool { return c.PrefillEngine != "" || c.DecodeEngine != "" }

// Validate reports a config that cannot be checked.
func (c *Config) Validate() error {
	switch {
	case c.Disaggregated() && c.Engine != "":
		return errors.New("give either an engine or a prefill and a decode engine, not both")
	case c.Disaggregated() && (c.PrefillEngine == "" || c.DecodeEngine == ""):
		return errors.New("a prefill engine needs a decode engine and the other way round")
	case !c.Disaggregated() && c.Engine == "":
		return errors.New("no engine to check")
	case c.Generator == nil || c.Derender == nil:
		return errors.New("a generator and a derender engine are required")
	case c.LongPrompts < 0:
		return fmt.Errorf("long prompts %d is negative", c.LongPrompts)
	case c.LongPrompts > 0 && c.LongPromptTokens < 16:
		return fmt.Errorf("long prompt tokens %d is below 16", c.LongPromptTokens)
	}
	return nil
}

// Check is one line of the checklist.
type Check struct {
	Name string `json:"name"`
	// Status is "pass", "fail" or "skip".
	Status string `json:"status"`
	Detail string `json:"detail"`
	// Fix says what to do about a failure.
	Fix     string             `json:"fix,omitempty"`
	Figures map[string]float64 `json:"figures,omitempty"`
}

// Check statuses.
const (
	StatusPass = "pass"
	StatusFail = "fail"
	StatusSkip = "skip"
)

// Report is the outcome of a run.
type Report struct {
	OK bool `json:"ok"`
	// Mode is "collocated" or "disaggregated".
	Mode    string            `json:"mode"`
	Engines map[string]string `json:"engines"`
	Checks  []Check           `json:"checks"`
}

// Failed returns the failing check, or nil.
func (r *Report) Failed() *Check {
	for i := range r.Checks {
		if r.Checks[i].Status == StatusFail {
			return &r.Checks[i]
		}
	}
	return nil
}

// Run runs the checks in order and stops at the first failure. Only an
// invalid config is an error; a failed check is in the report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("preflight: %w", err)
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 5 * time.Minute
	}
	if cfg.MinVersion == nil {
		v := MinVersion
		cfg.MinVersion = &v
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	r, err := newRunner(cfg)
	if err != nil {
		return nil, err
	}
	defer r.close()
	rep := &Report{Mode: "collocated", Engines: map[string]string{}}
	if cfg.Disaggregated() {
		rep.Mode = "disaggregated"
	}
	for _, e := range r.engines {
		rep.Engines[e.role] = e.url
	}
	steps := []func(context.Context) []Check{r.checkVersions, r.checkShortRequest, r.checkLongPrompts}
	for _, step := range steps {
		for _, c := range step(ctx) {
			rep.Checks = append(rep.Checks, c)
			if c.Status == StatusFail {
				return rep, nil
			}
		}
	}
	rep.OK = true
	return rep, nil
}

// target is one engine under test.
type target struct {
	role   string // "engine", "prefill" or "decode"
	url    string
	client *engine.Client
}

type runner struct {
	cfg     Config
	engines []*target // in check order
	// gen is the engine that generates: the collocated one or decode.
	gen, prefill *target
}

func newRunner(cfg Config) (*runner, error) {
	r := &runner{cfg: cfg}
	add := func(role, url string) (*target, error) {
		c, err := engine.New(url, engine.Options{APIKey: cfg.APIKey, Logger: cfg.Logger,
			FirstEventTimeout: cfg.RequestTimeout, Retries: -1})
		if err != nil {
			return nil, fmt.Errorf("preflight: %s engine %s: %w", role, url, err)
		}
		t := &target{role: role, url: c.URL(), client: c}
		r.engines = append(r.engines, t)
		return t, nil
	}
	var err error
	if !cfg.Disaggregated() {
		r.gen, err = add("engine", cfg.Engine)
		return r, err
	}
	if r.prefill, err = add("prefill", cfg.PrefillEngine); err != nil {
		return nil, err
	}
	r.gen, err = add("decode", cfg.DecodeEngine)
	return r, err
}

func (r *runner) close() {
	for _, e := range r.engines {
		e.client.CloseIdleConnections()
	}
}

func pass(name, detail string, figures map[string]float64) Check {
	return Check{Name: name, Status: StatusPass, Detail: detail, Figures: figures}
}

func fail(name, detail, fix string) Check {
	return Check{Name: name, Status: StatusFail, Detail: detail, Fix: fix}
}
