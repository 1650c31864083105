// Package orchestrator serves OpenAI's /v1/chat/completions and
// /v1/completions over tokens-only engines: render the request to prompt
// ids and sampling params, stream POST /inference/v1/generate from an
// engine, derender each event in-process into vLLM's SSE chunks, and
// enforce what the engine will not — stop strings, cancellation, timeouts
// and errors. Which engine serves a request is the fleet's business
// (package fleet): the orchestrator hands its Engines each prepared
// request and reads the stream it gets back.
package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/fleet"
	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/orchestrator/engine"
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
)

// Config is what an Orchestrator needs.
type Config struct {
	Model     *model.Model
	Generator *render.Generator
	Derender  *derender.Engine
	// Parsers are the parser flags Derender was built with (they decide
	// skip_special_tokens and the tool_choice grammar sent to the engine).
	Parsers parsers.Config
	// Engines runs each engine request: a collocated fleet.Pool or a
	// fleet.PDPool.
	Engines Engines
	// ModelName is the "model" answers report (the first served name).
	ModelName string
	// Adapters are the --lora-modules names a request may give as its
	// "model": the engine request carries the name (the engine resolves
	// the adapter by it, as vLLM's serve_tokens does through
	// _maybe_get_adapters) and answers report it instead of ModelName
	// (OpenAIServingModels.model_name(lora_request)).
	Adapters []string
	// ResponseRole is --response-role ("" means "assistant").
	ResponseRole string
	Logger       *slog.Logger
	// Metrics receives per-request figures; nil keeps none.
	Metrics *Metrics
	// Router, when the pools route with one, has its figures written with
	// Metrics.
	Router *fleet.Router
}

// Orchestrator runs OpenAI requests over engines. It is safe for
// concurrent use.
type Orchestrator struct {
	cfg Config
	log *slog.Logger
	now func() time.Time
}

// New checks cfg and returns an Orchestrator.
func New(cfg Config) (*Orchestrator, error) {
	switch {
	case cfg.Model == nil || cfg.Generator == nil || cfg.Derender == nil:
		return nil, errors.New("orchestrator: Model, Generator and Derender are required")
	case cfg.Engines == nil:
		return nil, errors.New("orchestrator: an engine pool is required")
	case cfg.ModelName == "":
		return nil, errors.New("orchestrator: ModelName is required")
	}
	if cfg.ResponseRole == "" {
		cfg.ResponseRole = "assistant"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics()
	}
	if cfg.Router != nil {
		cfg.Metrics.router = cfg.Router
	}
	return &Orchestrator{cfg: cfg, log: cfg.Logger, now: time.Now}, nil
}

// responseModel is the "model" an answer reports for a request whose
// model was model: the adapter's name for a LoRA adapter, else the first
// served name whichever alias the request used, as vLLM's model_name does
// (vllm/entrypoints/openai/models/serving.py).
// Parsers are the parser flags answers are derendered with.
func (o *Orchestrator) Parsers() parsers.Config { return o.cfg.Parsers }

// Generator renders the requests the orchestrator runs.
func (o *Orchestrator) Generator() *render.Generator { return o.cfg.Generator }

// ResponseModel is the "model" an answer reports for a request's model: a
// LoRA adapter's name, else the served model's.
func (o *Orchestrator) ResponseModel(model *string) string {
	if model != nil && slices.Contains(o.cfg.Adapters, *model) {
		return *model
	}
	return o.cfg.ModelName
}

// Metrics is where the orchestrator's figures are kept.
func (o *Orchestrator) Metrics() *Metrics { return o.cfg.Metrics }

// EngineHealth is a snapshot of the engine pools' state.
func (o *Orchestrator) EngineHealth() []fleet.EngineHealth { return o.cfg.Engines.Health() }

// Sink receives a streamed answer: the HTTP layer's SSE writer.
type Sink interface {
	// Start commits the 200 text/event-stream response; it is called once,
	// before the first frame.
	Start() error
	// Frame writes one complete SSE frame ("data: …\n\n") and flushes it.
	Frame(frame []byte) error
}

// Error is a request that failed before any answer was sent: the status
// and OpenAI error body to answer with.
type Error struct {
	Status  int
	Type    string
	Message string
	Param   *string
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Type, e.Message) }

// Info is the error body.
func (e *Error) Info() protocol.ErrorInfo {
	return protocol.ErrorInfo{Message: pylax.SanitizeMessage(e.Message), Type: e.Type, Param: e.Param, Code: e.Status}
}

// AsError classifies err as the OpenAI error a client gets.
func AsError(err error) *Error {
	var (
		oe  *Error
		pe  *fleet.Error
		rb  *render.BadRequestError
		db  *derender.BadRequestError
		ee  *engine.Error
		spe *protocol.SamplingParamsError
	)
	switch {
	case errors.As(err, &oe):
		return oe
	case errors.As(err, &pe):
		return &Error{Status: pe.Status, Type: pe.Type, Message: pe.Message}
	case errors.As(err, &rb):
		e := &Error{Status: http.StatusBadRequest, Type: protocol.ErrorTypeBadRequest, Message: rb.Message}
		if rb.Param != "" {
			p := rb.Param
			e.Param = &p
		}
		return e
	case errors.As(err, &db):
		return &Error{Status: http.StatusBadRequest, Type: protocol.ErrorTypeBadRequest, Message: db.Message}
	case errors.As(err, &spe):
		return &Error{Status: http.StatusBadRequest, Type: protocol.ErrorTypeBadRequest, Message: spe.Error(), Param: spe.Parameter}
	case errors.As(err, &ee):
		t := ee.Type
		if t == "" {
			t = http.StatusText(ee.Status)
		}
		return &Error{Status: ee.Status, Type: t, Message: ee.Message}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Status: http.StatusGatewayTimeout, Type: http.StatusText(http.StatusGatewayTimeout), Message: err.Error()}
	}
	return &Error{Status: http.StatusInternalServerError, Type: protocol.ErrorTypeInternal, Message: "Internal Server Error"}
}

// generationError is vLLM's GenerationError: an engine choice finished
// with finish_reason "error".
var generationError = &Error{Status: http.StatusInternalServerError, Type: protocol.ErrorTypeInternal,
	Message: "Internal server error"}

// abort tells the engine to stop a request the client no longer reads,
// even though ctx (the client's) may be done.
func (o *Orchestrator) abort(ctx context.Context, eng *engine.Client, requestIDs ...string) {
	ids := make([]string, len(requestIDs))
	for i, id := range requestIDs {
		ids[i] = engine.EngineRequestID(id)
	}
	// Abort bounds the call by its own timeout.
	if err := eng.Abort(context.WithoutCancel(ctx), ids...); err != nil {
		o.log.WarnContext(ctx, "engine abort failed", "request_ids", ids, "engine", eng.URL(), "err", err)
		return
	}
	o.cfg.Metrics.aborts.Add(int64(len(ids)))
	o.log.DebugContext(ctx, "engine request aborted", "request_ids", ids)
}

// engineRequest turns a rendered GenerateRequest into what the engine gets:
// stop strings stripped (the tokens-only engine refuses them; they are
// enforced here), always streamed, no engine usage events (usage is
// counted here), and max_tokens always sent: the engine reads an absent key
// as "up to the context length", so omitting the default 16 as the render
// endpoint does would not give the client its 16 tokens.
func engineRequest(g *protocol.GenerateRequest) {
	g.SamplingParams.Stop = nil
	g.SamplingParams.ExplicitMaxTokens = true
	t := true
	g.Stream = &t
	g.StreamOptions = nil
}

// stopConfig is the stop handling of a request's sampling params on m.
func (o *Orchestrator) stopConfig(p protocol.SamplingParams) derender.StopConfig {
	es := render.ApplyEngineStops(p, o.cfg.Model)
	return derender.StopConfig{Stop: p.Stop, IncludeInOutput: p.IncludeStopStrInOutput, MinTokens: p.MinTokens,
		EOS: es.EOS, StopTokenIDs: es.StopTokenIDs}
}

func badRequestf(format string, args ...any) *Error {
	return &Error{Status: 400, Type: protocol.ErrorTypeBadRequest, Message: fmt.Sprintf(format, args...)}
}
