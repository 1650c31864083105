// Package server is vrender's HTTP layer: routes, request decoding, error
// bodies, request IDs, access logging and shutdown. It holds no domain
// logic: handlers decode a request, call the model's tokenizer (and, as the
// tiers land, render/derender), and encode the answer in vLLM's wire format.
package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"go.opentelemetry.io/otel/trace"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/internal/membudget"
	"github.com/vrender/vrender/internal/telemetry"
	"github.com/vrender/vrender/media"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/orchestrator"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
)

// DefaultMaxBodyBytes bounds a request body when Config.MaxBodyBytes is 0.
// vLLM sets no limit; 64 MiB holds a full-context prompt with room to spare
// while keeping one client from exhausting memory.
const DefaultMaxBodyBytes = 64 << 20

// Config is what a server serves and how.
type Config struct {
	// Model is the loaded model; required.
	Model *model.Model
	// ModelPath is the "root" of /v1/models, vLLM's model argument as given;
	// "" means Model.Path.
	ModelPath string
	// ServedModelNames are the names a request's "model" may carry (vLLM's
	// --served-model-name). Every name gets a card in /v1/models. Empty
	// means ModelPath.
	ServedModelNames []string
	// LoRAModules are vLLM's --lora-modules: adapters a request may name
	// in "model" besides the served names, listed in /v1/models after
	// them. The adapter is applied by the engine (the rendered and
	// engine requests carry its name); rendering uses the base model's
	// tokenizer and template, as vLLM does.
	LoRAModules []protocol.LoRAModulePath
	// Version is what GET /version reports.
	Version string
	// Logger receives the access log and errors; nil means slog.Default().
	Logger *slog.Logger
	// MaxBodyBytes bounds request bodies; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Generator renders chat and completion requests (the render flags
	// live in it); nil means one with vLLM's default flags.
	Generator *render.Generator
	// Derender derenders engine output (the parser flags live in it); nil
	// means one without parsers.
	Derender *derender.Engine
	// Orchestrator serves /v1/chat/completions and /v1/completions over
	// engines; nil (no --engine) answers them with 503.
	Orchestrator *orchestrator.Orchestrator
	// APIKeys are vLLM's --api-key: when any is set, every route serving
	// model work needs "Authorization: Bearer <one of them>".
	APIKeys []string
	// Limits bound request fields (messages, tools, derender token ids).
	Limits Limits
	// LogRequests is vLLM's --enable-log-requests: log request bodies at
	// info. Off, no prompt or output is ever logged.
	LogRequests bool
	// DisableAccessLog is vLLM's --disable-uvicorn-access-log: no line per
	// request (requests are still counted in /metrics, and 5xx answers
	// still logged as errors).
	DisableAccessLog bool
	// TracerProvider, when set, traces every request (OpenTelemetry);
	// nil traces nothing but still forwards an incoming traceparent to
	// engines.
	TracerProvider trace.TracerProvider
}

// server holds the state handlers share; it is read-only after New.
type server struct {
	model        *model.Model
	modelPath    string
	servedNames  []string
	adapters     []protocol.LoRAModulePath
	version      string
	log          *slog.Logger
	maxBodyBytes int64
	now          func() time.Time
	generator    *render.Generator
	derender     *derender.Engine
	orchestrator *orchestrator.Orchestrator
	apiKeys      apiKeys
	limits       Limits
	logRequests  bool
	noAccessLog  bool
	tracer       trace.Tracer // nil: tracing off
	stages       *telemetry.Stages
	started      time.Time

	metrics  serverMetrics
	draining atomic.Bool
	bodies   bodyPool // response buffers of writeJSON
}

// Handler is the server's HTTP handler. Serve drains it on shutdown.
type Handler struct {
	h http.Handler
	s *server
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.h.ServeHTTP(w, r) }

// StartDraining makes /health answer 503, so that load balancers stop
// sending requests while in-flight ones finish.
func (h *Handler) StartDraining() { h.s.draining.Store(true) }

// InflightStreams is the number of streaming responses being written.
func (h *Handler) InflightStreams() int64 { return h.s.metrics.inflightStreams.Load() }

// New returns the HTTP handler serving cfg.
func New(cfg Config) (*Handler, error) {
	s, err := newServer(cfg)
	if err != nil {
		return nil, err
	}
	return &Handler{h: s.routes(), s: s}, nil
}

func newServer(cfg Config) (*server, error) {
	if cfg.Model == nil || cfg.Model.Tokenizer == nil {
		return nil, errors.New("server: Config.Model with a tokenizer is required")
	}
	s := &server{
		model:        cfg.Model,
		modelPath:    cfg.ModelPath,
		servedNames:  cfg.ServedModelNames,
		adapters:     cfg.LoRAModules,
		version:      cfg.Version,
		log:          cfg.Logger,
		maxBodyBytes: cfg.MaxBodyBytes,
		now:          time.Now,
		generator:    cfg.Generator,
		derender:     cfg.Derender,
		orchestrator: cfg.Orchestrator,
		apiKeys:      newAPIKeys(cfg.APIKeys),
		limits:       cfg.Limits.withDefaults(),
		logRequests:  cfg.LogRequests,
		noAccessLog:  cfg.DisableAccessLog,
		stages:       telemetry.NewStages(),
		started:      time.Now(),
	}
	if cfg.TracerProvider != nil {
		s.tracer = cfg.TracerProvider.Tracer(tracerName)
	}
	if s.derender == nil {
		d, err := derender.New(cfg.Model, derender.Config{MaxLogprobs: 20, CacheSize: 0})
		if err != nil {
			return nil, err
		}
		s.derender = d
	}
	if s.generator == nil {
		g, err := DefaultGenerator(cfg.Model)
		if err != nil {
			return nil, err
		}
		s.generator = g
	}
	if s.modelPath == "" {
		s.modelPath = cfg.Model.Path
	}
	if len(s.servedNames) == 0 {
		s.servedNames = []string{s.modelPath}
	}
	for _, name := range s.servedNames {
		if name == "" {
			return nil, errors.New("server: empty served model name")
		}
	}
	if err := protocol.ValidateLoRAModules(s.adapters, s.servedNames); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.maxBodyBytes <= 0 {
		s.maxBodyBytes = DefaultMaxBodyBytes
	}
	// The generator and derender engine are shared with the orchestrator,
	// so their stages land in the same histograms whichever endpoint ran
	// them.
	s.generator.Renderer().SetStages(s.stages)
	s.derender.SetStages(s.stages)
	return s, nil
}

// routes builds the router. Middleware order matters: the request ID is
// set first so that the access log and panic reports carry it, and panics
// are recovered inside the access log so that their 500 is logged and
// counted.
func (s *server) routes() http.Handler {
	r := chi.NewRouter()
	// GetHead answers HEAD on every GET route, as Starlette does; load
	// balancers probe /health that way.
	// Authentication runs after tracing and the access log so that
	// refused requests are counted, logged (without their header) and
	// traced.
	r.Use(requestID, s.accessLog, s.recoverPanics, s.trace, s.authenticate, middleware.GetHead)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, httpError(http.StatusNotFound, "Not Found"))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, httpError(http.StatusMethodNotAllowed, "Method Not Allowed"))
	})

	budgeted := s.generator.Renderer().ImageBudget() != nil
	for _, rt := range routeTable {
		h := func(w http.ResponseWriter, req *http.Request) { rt.handle(s, w, req) }
		if budgeted && rt.method == http.MethodPost {
			// A request's images keep their reservation until its answer
			// is written: their features live that long.
			h = func(w http.ResponseWriter, req *http.Request) {
				ctx, end := membudget.WithScope(req.Context())
				defer end()
				rt.handle(s, w, req.WithContext(ctx))
			}
		}
		r.Method(rt.method, rt.path, http.HandlerFunc(h))
	}
	return r
}

// DefaultGenerator is the generator for m with vLLM's default render flags:
// the model's own template and generation_config.json, and images for a
// model with an image processor, fetched with media's defaults.
func DefaultGenerator(m *model.Model) (*render.Generator, error) {
	images, err := render.DefaultImageConfig(m, media.Config{})
	if err != nil {
		return nil, err
	}
	return generatorWithImages(m, images)
}

// generatorWithImages is DefaultGenerator with images' settings.
func generatorWithImages(m *model.Model, images *render.ImageConfig) (*render.Generator, error) {
	r, err := render.New(m, render.Config{Images: images})
	if err != nil {
		return nil, err
	}
	d, err := render.LoadSamplingDefaults(m, render.GenerationConfigAuto, nil)
	if err != nil {
		return nil, err
	}
	return render.NewGenerator(r, m.MaxModelLen, render.GeneratorConfig{Defaults: d}), nil
}
