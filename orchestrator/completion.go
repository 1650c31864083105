package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/fleet"
	"github.com/vrender/vrender/orchestrator/engine"
	"github.com/vrender/vrender/protocol"
)

// Completion serves one completion request: one engine request per prompt
// ("cmpl-<id>-<i>"), n choices each, flattened with index prompt*n+choice
// as vLLM numbers them. Stream and errors as Chat.
func (o *Orchestrator) Completion(ctx context.Context, req *protocol.CompletionRequest, baseID string, sink Sink) (*protocol.ServedCompletionResponse, error) {
	o.cfg.Metrics.requests[APICompletions].Add(1)
	res, err := o.completion(ctx, req, baseID, sink)
	if err != nil {
		o.cfg.Metrics.failed.Add(1)
	}
	return res, err
}

// promptRun is one prompt's engine request.
type promptRun struct {
	requestID string
	engine    *engine.Client
	stream    *fleet.Call
	prompt    []int
	echo      string
	noGen     bool // echo with max_tokens 0: the prompt is the whole answer
	sessions  []*derender.CompletionSession
	echoed    []bool
	tokens    [][]int
	kv        json.RawMessage
	stopped   bool // a stop string ended a choice
	aborted   bool
}

func (p *promptRun) allDone() bool {
	for _, s := range p.sessions {
		if !s.Done() {
			return false
		}
	}
	return true
}

type completionRun struct {
	o              *Orchestrator
	id             string
	model          string // the answers' "model"
	created        int64
	n              int
	prompts        []*promptRun
	returnTokenIDs bool
	usage, cont    bool
	stream         bool
	sseWriter
}

// promptEvent is an event of one prompt's stream.
type promptEvent struct {
	prompt int
	ev     *protocol.GenerateResponse
	err    error
	read   time.Time
}

func (o *Orchestrator) completion(ctx context.Context, req *protocol.CompletionRequest, baseID string, sink Sink) (*protocol.ServedCompletionResponse, error) {
	if req.Stream != nil && *req.Stream && req.UseBeamSearch {
		return nil, badRequestf("Streaming is not currently supported with beam search")
	}
	rctx, span := startSpan(ctx, "render")
	rendered, err := o.cfg.Generator.RenderCompletion(rctx, req)
	endSpan(span, err)
	if err != nil {
		return nil, AsError(err)
	}
	run := o.newCompletionRun(req, baseID, sink, rendered)
	// One engine span covers every prompt's engine call and the
	// in-process derender of their events.
	ctx, span = startSpan(ctx, "engine", attribute.Int("vrender.prompts", len(rendered)))
	var engErr error
	defer func() { endSpan(span, engErr) }()
	for i, p := range run.prompts {
		st, err := o.cfg.Engines.Start(ctx, &rendered[i], p.requestID)
		if err != nil {
			engErr = err
			run.closeAll(ctx, true)
			return nil, AsError(err)
		}
		p.stream, p.engine = st, st.Engine()
	}
	defer run.closeAll(ctx, false)

	if err := run.drain(ctx); err != nil {
		if ctx.Err() != nil || errors.Is(err, errClientGone) {
			return nil, ctx.Err()
		}
		if !run.started {
			return nil, AsError(err)
		}
		run.fail(AsError(err))
		return nil, nil
	}
	completion := 0
	for _, p := range run.prompts {
		for _, s := range p.sessions {
			completion += s.Tokens()
		}
	}
	o.cfg.Metrics.generated[APICompletions].Add(int64(completion))
	span.SetAttributes(attribute.Int("vrender.completion_tokens", completion))
	if !run.stream {
		return run.response(completion), nil
	}
	run.finish(completion)
	return nil, nil
}

// newCompletionRun sets up the run of the rendered prompts: n derender
// sessions per prompt, each prompt with its own engine request id.
func (o *Orchestrator) newCompletionRun(req *protocol.CompletionRequest, baseID string, sink Sink, rendered []protocol.GenerateRequest) *completionRun {
	run := &completionRun{o: o, id: "cmpl-" + baseID, model: o.ResponseModel(req.Model), created: o.now().Unix(), n: 1,
		stream: req.Stream != nil && *req.Stream, sseWriter: sseWriter{sink: sink, metrics: o.cfg.Metrics},
		returnTokenIDs: req.ReturnTokenIDs != nil && *req.ReturnTokenIDs}
	if run.stream && req.StreamOptions != nil {
		run.usage = req.StreamOptions.IncludeUsage != nil && *req.StreamOptions.IncludeUsage
		run.cont = run.usage && req.StreamOptions.ContinuousUsageStats != nil && *req.StreamOptions.ContinuousUsageStats
	}
	echo := req.Echo != nil && *req.Echo
	skip := req.SkipSpecialTokens
	for i := range rendered {
		g := &rendered[i]
		stop := o.stopConfig(g.SamplingParams)
		engineRequest(g)
		run.n = max(g.SamplingParams.N, 1)
		p := &promptRun{requestID: engine.NewRequestID(run.id + "-" + strconv.Itoa(i)), prompt: g.TokenIDs, echoed: make([]bool, run.n)}
		if echo {
			p.echo = o.promptText(req, i, g.TokenIDs)
			// OpenAI's "echo without generation": render asked the engine for
			// one token, and vLLM answers with the prompt alone.
			p.noGen = req.MaxTokens != nil && *req.MaxTokens == 0
		}
		for range run.n {
			p.sessions = append(p.sessions, o.cfg.Derender.NewCompletionSession(skip,
				derender.SessionConfig{Prompt: g.TokenIDs, Stop: stop, Collect: !run.stream}))
		}
		p.tokens = make([][]int, run.n)
		run.prompts = append(run.prompts, p)
		o.cfg.Metrics.prompt[APICompletions].Add(int64(len(g.TokenIDs)))
	}
	return run
}

// drain takes every prompt's events until all streams end. An error ends
// it early, every stream closed and the engine requests not finished
// aborted.
func (r *completionRun) drain(ctx context.Context) error {
	ectx, cancel := context.WithCancel(ctx)
	defer cancel() // releases the readers of streams left early
	for pe := range r.events(ectx) {
		if err := r.take(ctx, pe); err != nil {
			r.closeAll(ctx, true)
			return err
		}
	}
	return nil
}

// take handles one event of one prompt's stream; a prompt whose every
// choice hit a stop string is aborted at the engine.
func (r *completionRun) take(ctx context.Context, pe promptEvent) error {
	p := r.prompts[pe.prompt]
	if errors.Is(pe.err, io.EOF) {
		if p.allDone() {
			return nil
		}
		return &Error{Status: http.StatusBadGateway, Type: http.StatusText(http.StatusBadGateway),
			Message: "engine stream ended before every choice finished"}
	}
	if pe.err != nil {
		return pe.err
	}
	if err := r.event(pe.prompt, pe.ev, pe.read); err != nil {
		return err
	}
	if p.stopped && p.allDone() && !p.aborted {
		p.aborted = true
		r.o.abort(ctx, p.engine, p.requestID)
	}
	return nil
}

// events merges the prompts' streams; a prompt stream stops after EOF, an
// error, or once all its choices finished by stop string.
func (r *completionRun) events(ctx context.Context) <-chan promptEvent {
	out := make(chan promptEvent, 16)
	var wg sync.WaitGroup
	for i, p := range r.prompts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ev, err := p.stream.Recv()
				select {
				case out <- promptEvent{prompt: i, ev: ev, err: err, read: time.Now()}:
				case <-ctx.Done():
					return
				}
				if err != nil {
					return
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	return out
}

// closeAll closes every prompt stream; abort also aborts the engine
// requests not known to be finished.
func (r *completionRun) closeAll(ctx context.Context, abort bool) {
	for _, p := range r.prompts {
		if p.stream == nil {
			continue
		}
		if abort && !p.aborted && !p.allDone() {
			p.aborted = true
			r.o.abort(ctx, p.engine, p.requestID)
		}
		_ = p.stream.Close()
	}
}

func (r *completionRun) event(pi int, ev *protocol.GenerateResponse, read time.Time) error {
	p := r.prompts[pi]
	if ev.KVTransferParams != nil && string(ev.KVTransferParams) != "null" {
		p.kv = ev.KVTransferParams
	}
	wrote := false
	for i := range ev.Choices {
		c := &ev.Choices[i]
		if c.Index < 0 || c.Index >= len(p.sessions) {
			return &Error{Status: http.StatusBadGateway, Type: http.StatusText(http.StatusBadGateway),
				Message: fmt.Sprintf("engine sent choice index %d beyond n=%d", c.Index, len(p.sessions))}
		}
		if c.FinishReason != nil && *c.FinishReason == "error" {
			return generationError
		}
		s := p.sessions[c.Index]
		if s.Done() {
			continue
		}
		step := s.Push(c.TokenIDs, c.Logprobs, c.FinishReason)
		if step.StopMatched {
			p.stopped = true
		}
		p.tokens[c.Index] = append(p.tokens[c.Index], c.TokenIDs...)
		if !r.stream || !step.Emit {
			continue
		}
		if err := r.writeStep(p, pi, c, &step); err != nil {
			return err
		}
		wrote = true
	}
	if wrote {
		r.o.cfg.Metrics.Event.Observe(time.Since(read))
	}
	return nil
}

func (r *completionRun) start() error {
	return r.open(r.id, "text_completion", r.created, r.model)
}

func (r *completionRun) writeStep(p *promptRun, pi int, c *protocol.GenerateChoice, step *derender.CompletionStep) error {
	if !r.started {
		if err := r.start(); err != nil {
			return err
		}
	}
	choice := protocol.CompletionChunkChoice{Index: c.Index + pi*r.n, Text: step.Text, Logprobs: step.Logprobs,
		FinishReason: step.FinishReason, StopReason: step.StopReason}
	if p.noGen {
		choice.Text, choice.Logprobs = "", nil
	}
	if !p.echoed[c.Index] {
		p.echoed[c.Index] = true
		if p.echo != "" {
			choice.Text = p.echo + choice.Text
		}
		if r.returnTokenIDs || p.echo != "" {
			choice.PromptTokenIDs = p.prompt
		}
	}
	if r.returnTokenIDs {
		choice.TokenIDs = idsOrEmpty(c.TokenIDs)
	}
	var u *protocol.UsageInfo
	if r.cont {
		u = protocol.NewUsage(len(p.prompt), p.sessions[c.Index].Tokens())
	}
	r.begin()
	var err error
	if r.buf, err = r.enc.AppendCompletion(r.buf, &choice, u); err != nil {
		return err
	}
	return r.frame()
}

func (r *completionRun) finish(completion int) {
	if !r.started && r.start() != nil {
		return
	}
	var u *protocol.UsageInfo
	if r.usage {
		prompt := 0
		for _, p := range r.prompts {
			prompt += len(p.prompt)
		}
		u = protocol.NewUsage(prompt, completion)
	}
	_ = r.end(u)
}

func (r *completionRun) fail(e *Error) {
	r.o.log.Warn("completion stream failed", "request_id", r.id, "status", e.Status, "err", e.Message)
	r.sseWriter.fail(e)
}

func (r *completionRun) response(completion int) *protocol.ServedCompletionResponse {
	res := &protocol.ServedCompletionResponse{ID: r.id, Object: "text_completion", Created: r.created,
		Model: r.model, Choices: []protocol.ServedCompletionChoice{}}
	prompt := 0
	for pi, p := range r.prompts {
		prompt += len(p.prompt)
		if pi == 0 {
			res.KVTransferParams = p.kv
		}
		for ci, s := range p.sessions {
			c := s.Result()
			choice := protocol.ServedCompletionChoice{Index: len(res.Choices), Text: p.echo + c.Text,
				Logprobs: c.Logprobs, FinishReason: c.FinishReason, StopReason: c.StopReason}
			if p.noGen {
				choice.Text, choice.Logprobs = p.echo, nil
			}
			if r.returnTokenIDs {
				choice.PromptTokenIDs = p.prompt
				choice.TokenIDs = idsOrEmpty(p.tokens[ci])
			}
			res.Choices = append(res.Choices, choice)
		}
	}
	res.Usage = protocol.NewUsage(prompt, completion)
	return res
}

// promptText is the text echo prepends: the prompt as given, or the
// decoded ids of a token prompt.
func (o *Orchestrator) promptText(req *protocol.CompletionRequest, i int, ids []int) string {
	if i < len(req.Prompts) && req.Prompts[i].Text != nil {
		return *req.Prompts[i].Text
	}
	text, err := o.cfg.Model.Decode(ids, false)
	if err != nil {
		return ""
	}
	return text
}
