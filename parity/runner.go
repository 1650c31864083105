package parity

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
)

// Config is a parity run's setup: the vLLM server and the vrender side
// built from the same flags `vrender serve` takes.
type Config struct {
	Client *Client
	// ServedModel is the "model" sent to vLLM; "" takes the first model
	// /v1/models lists.
	ServedModel string
	// Model, Generator and Derender are vrender's side.
	Model     *model.Model
	Generator *render.Generator
	Derender  *derender.Engine
	// Seed is sent with every chat completion.
	Seed int64
	// Timeout bounds each request's checks (0: none).
	Timeout time.Duration
	// Concurrency is how many requests are checked at once (< 1: one).
	Concurrency int
	Logger      *slog.Logger
}

// Run checks every request against the vLLM server and returns the report.
// An error is a run that could not start (the server unreachable); a
// request that fails is a result in the report.
func Run(ctx context.Context, cfg Config, reqs []Request) (*Report, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	started := time.Now()
	served := cfg.ServedModel
	if served == "" {
		names, err := cfg.Client.Models(ctx)
		if err != nil {
			return nil, fmt.Errorf("ask vLLM for its model (or pass --served-model-name): %w", err)
		}
		if len(names) == 0 {
			return nil, errors.New("vLLM's /v1/models lists no model")
		}
		served = names[0]
	}
	r := &runner{cfg: cfg, served: served, log: log}
	rep := &Report{VLLM: cfg.Client.BaseURL, ServedModel: served, Model: cfg.Model.Path, Seed: cfg.Seed,
		Started: started.UTC(), Cases: make([]Case, len(reqs))}

	workers := max(cfg.Concurrency, 1)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				rep.Cases[i] = r.check(ctx, reqs[i])
			}
		})
	}
feed:
	for i := range reqs {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep.Notes = r.notes()
	rep.Elapsed = time.Since(started).Round(time.Millisecond).String()
	rep.summarize()
	return rep, nil
}

// runner holds what the checks of all requests share.
type runner struct {
	cfg    Config
	served string
	log    *slog.Logger

	mu          sync.Mutex
	unsupported map[string]bool // checks whose route the server lacks
}

func (r *runner) markUnsupported(check string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.unsupported == nil {
		r.unsupported = map[string]bool{}
	}
	r.unsupported[check] = true
}

func (r *runner) notes() []string {
	var out []string
	if r.unsupported[CheckRender] {
		out = append(out, "the server has no /v1/chat/completions/render (an older vllm serve): that render check was skipped")
	}
	if r.unsupported[CheckTokenize] {
		out = append(out, "the server has no /tokenize: that render check was skipped")
	}
	if r.unsupported[CheckParserBatch] {
		out = append(out, "the server has no /v1/chat/completions (a `vllm launch render` server generates nothing): "+
			"parser checks were skipped; point --vllm at a `vllm serve` with the same parser flags to run them")
	}
	return out
}

// check runs every check of one request.
func (r *runner) check(ctx context.Context, req Request) Case {
	if r.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.cfg.Timeout)
		defer cancel()
	}
	c := Case{Name: req.Name, Line: req.Line}
	r.log.DebugContext(ctx, "checking", "case", req.Name, "line", req.Line)
	chatReq, decodeErr := protocol.DecodeChatCompletionRequest(req.Body)
	c.Results = append(c.Results, r.checkTokenize(ctx, req, chatReq, decodeErr))
	renderRes, rendered := r.checkRender(ctx, req, chatReq, decodeErr)
	c.Results = append(c.Results, renderRes)
	c.Results = append(c.Results, r.checkParsers(ctx, req, chatReq, decodeErr, rendered)...)
	return c
}

// decodeIDs renders token ids as text for difference windows.
func (r *runner) decodeIDs(ids []int) (string, error) { return r.cfg.Model.Decode(ids, false) }

// compareRender compares vLLM's and vrender's prompt ids, or their refusals.
func (r *runner) compareRender(check string, vllmIDs []int, vllmErr error, ours []int, ourErr error) Result {
	res := Result{Check: check}
	switch {
	case errors.Is(vllmErr, ErrUnsupported):
		r.markUnsupported(check)
		res.Status, res.Reason = Skipped, "not served by this vLLM server"
	case vllmErr != nil && !Refused(vllmErr):
		res.Status, res.Reason = Fail, "vLLM request failed: "+vllmErr.Error()
	case vllmErr != nil && ourErr != nil:
		res.Status, res.Reason = Pass, "both refuse the request"
	case vllmErr != nil:
		res.Status, res.Reason = Fail, "vLLM refuses the request, vrender renders it: "+vllmErr.Error()
	case ourErr != nil:
		res.Status, res.Reason = Fail, "vrender refuses the request, vLLM renders it: "+ourErr.Error()
	default:
		if d := compareIDs(vllmIDs, ours, r.decodeIDs); d != nil {
			res.Status, res.Differences = Fail, []Difference{*d}
		} else {
			res.Status = Pass
		}
	}
	return res
}

// checkTokenize compares /tokenize's chat form with vrender's tokenize of
// the same fields (no tool_choice, no length limit, as vLLM's handler).
func (r *runner) checkTokenize(ctx context.Context, req Request, chatReq *protocol.ChatCompletionRequest, decodeErr error) Result {
	body, err := tokenizeBody(req.Body, r.served)
	if err != nil {
		return Result{Check: CheckTokenize, Status: Fail, Reason: err.Error()}
	}
	vllmIDs, vllmErr := r.cfg.Client.Tokenize(ctx, body)
	ours, ourErr := r.tokenizeOurs(ctx, chatReq, decodeErr)
	return r.compareRender(CheckTokenize, vllmIDs, vllmErr, ours, ourErr)
}

func (r *runner) tokenizeOurs(ctx context.Context, req *protocol.ChatCompletionRequest, decodeErr error) ([]int, error) {
	if decodeErr != nil {
		return nil, decodeErr
	}
	if err := r.cfg.Generator.CheckChatRequest(protocol.ToolChoice{}, req.ChatTemplate, req.ChatTemplateKwargs); err != nil {
		return nil, err
	}
	p, err := r.cfg.Generator.Renderer().RenderChat(ctx, render.ChatInput{
		Messages:             req.Messages,
		Tools:                req.Tools,
		ChatTemplate:         req.ChatTemplate,
		ChatTemplateKwargs:   req.ChatTemplateKwargs,
		AddGenerationPrompt:  req.AddGenerationPrompt,
		ContinueFinalMessage: req.ContinueFinalMessage,
		AddSpecialTokens:     req.AddSpecialTokens,
	})
	if err != nil {
		return nil, err
	}
	return p.TokenIDs, nil
}

// checkRender compares /v1/chat/completions/render with vrender's render,
// and returns vrender's render for the parser checks (nil if it failed).
func (r *runner) checkRender(ctx context.Context, req Request, chatReq *protocol.ChatCompletionRequest, decodeErr error) (Result, *render.ChatResult) {
	body, err := renderBody(req.Body, r.served)
	if err != nil {
		return Result{Check: CheckRender, Status: Fail, Reason: err.Error()}, nil
	}
	var (
		ours   *render.ChatResult
		ourErr = decodeErr
	)
	if decodeErr == nil {
		ours, ourErr = r.cfg.Generator.RenderChat(ctx, chatReq)
	}
	vllmIDs, vllmErr := r.cfg.Client.Render(ctx, body)
	var ourIDs []int
	if ours != nil {
		ourIDs = ours.Request.TokenIDs
	}
	return r.compareRender(CheckRender, vllmIDs, vllmErr, ourIDs, ourErr), ours
}

// stopConfig is the engine-side stop handling vLLM applied while
// generating: vrender's render of the request when it has one, else the
// request's own fields.
func (r *runner) stopConfig(req *protocol.ChatCompletionRequest, rendered *render.ChatResult) derender.StopConfig {
	p := protocol.SamplingParams{Stop: req.Stop, StopTokenIDs: req.StopTokenIDs, IgnoreEOS: req.IgnoreEOS,
		IncludeStopStrInOutput: req.IncludeStopStrInOutput, MinTokens: req.MinTokens}
	if rendered != nil {
		p = rendered.Request.SamplingParams
	}
	es := render.ApplyEngineStops(p, r.cfg.Model)
	return derender.StopConfig{Stop: p.Stop, IncludeInOutput: p.IncludeStopStrInOutput, MinTokens: p.MinTokens,
		EOS: es.EOS, StopTokenIDs: es.StopTokenIDs}
}

// engineFinish is the engine's finish_reason behind vLLM's answer, which
// vrender's derender takes as input. vLLM's server reports "tool_calls"
// whenever it parsed calls, even for output cut off by max_tokens: then
// the last id tells, since an engine that stopped on its own ended on a
// stop token (a stop string ending it is found again by derender's stop
// check, whatever reason it is given).
func (r *runner) engineFinish(vllm string, ids []int, stop derender.StopConfig) string {
	switch {
	case vllm == "length":
		return "length"
	case vllm != "tool_calls" || len(ids) == 0:
		return "stop"
	}
	last := ids[len(ids)-1]
	if (stop.EOS != nil && *stop.EOS == last) || slices.Contains(stop.StopTokenIDs, last) ||
		slices.Contains(r.cfg.Model.EOSTokenIDs, last) || r.cfg.Model.Tokenizer.IsSpecial(last) {
		return "stop"
	}
	return "length"
}

// derenderBatch derenders vLLM's output ids in one event, as vrender's
// non-streaming path does.
func (r *runner) derenderBatch(req *protocol.ChatCompletionRequest, stop derender.StopConfig, prompt, ids []int, finish string) (Answer, error) {
	s, err := r.cfg.Derender.NewChatSession(req, derender.SessionConfig{Prompt: prompt, Stop: stop, Collect: true})
	if err != nil {
		return Answer{}, err
	}
	s.Push(ids, nil, &finish)
	if !s.Done() {
		return Answer{}, errors.New("derender did not finish the choice")
	}
	return answerFromChoice(s.Result()), nil
}

// derenderStream derenders vLLM's output ids chunk by chunk as the vLLM
// stream delivered them, accumulating vrender's deltas.
func (r *runner) derenderStream(req *protocol.ChatCompletionRequest, stop derender.StopConfig, prompt []int, chunks [][]int, finish string) (Answer, error) {
	s, err := r.cfg.Derender.NewChatSession(req, derender.SessionConfig{Prompt: prompt, Stop: stop})
	if err != nil {
		return Answer{}, err
	}
	var acc accumulator
	for i, ids := range chunks {
		var fin *string
		if i == len(chunks)-1 {
			fin = &finish
		}
		step := s.Push(ids, nil, fin)
		if step.Emit {
			acc.add(&step.Delta, step.FinishReason)
		}
		if s.Done() {
			break
		}
	}
	if !s.Done() {
		return Answer{}, errors.New("derender did not finish the choice")
	}
	return acc.answer(), nil
}

// checkParsers runs the request through vLLM's /v1/chat/completions
// (non-streaming and streaming) and derenders vLLM's output ids in vrender.
func (r *runner) checkParsers(ctx context.Context, req Request, chatReq *protocol.ChatCompletionRequest, decodeErr error, rendered *render.ChatResult) []Result {
	skipAll := func(reason string) []Result {
		return []Result{{Check: CheckParserBatch, Status: Skipped, Reason: reason},
			{Check: CheckParserStrm, Status: Skipped, Reason: reason},
			{Check: CheckVLLMStream, Status: Skipped, Reason: reason}}
	}
	batchBody, err := chatBody(req, r.served, r.cfg.Seed, false)
	if err != nil {
		return skipAll(err.Error())
	}
	batch, err := r.cfg.Client.Chat(ctx, batchBody)
	switch {
	case errors.Is(err, ErrUnsupported):
		r.markUnsupported(CheckParserBatch)
		return skipAll("the server has no /v1/chat/completions")
	case Refused(err):
		// Nothing was generated to derender; whether vrender refuses the
		// same requests is the render checks' business.
		return skipAll("vLLM refuses the request: " + err.Error())
	case err != nil:
		res := skipAll("no non-streaming answer from vLLM to compare with")
		res[0] = Result{Check: CheckParserBatch, Status: Fail, Reason: "vLLM request failed: " + err.Error()}
		return res
	case decodeErr != nil:
		return []Result{{Check: CheckParserBatch, Status: Fail, Reason: "vrender refuses the request vLLM answered: " + decodeErr.Error()},
			{Check: CheckParserStrm, Status: Skipped, Reason: "vrender refuses the request"},
			{Check: CheckVLLMStream, Status: Skipped, Reason: "vrender refuses the request"}}
	}
	stop := r.stopConfig(chatReq, rendered)
	prompt := batch.PromptTokenIDs
	if prompt == nil && rendered != nil {
		prompt = rendered.Request.TokenIDs
	}
	want := batch.Answer
	out := []Result{r.batchResult(chatReq, stop, prompt, batch)}

	streamBody, err := chatBody(req, r.served, r.cfg.Seed, true)
	if err != nil {
		return append(out, Result{Check: CheckParserStrm, Status: Fail, Reason: err.Error()},
			Result{Check: CheckVLLMStream, Status: Skipped, Reason: err.Error()})
	}
	strm, err := r.cfg.Client.ChatStream(ctx, streamBody)
	if err != nil {
		return append(out, Result{Check: CheckParserStrm, Status: Fail, Reason: "vLLM streaming request failed: " + err.Error()},
			Result{Check: CheckVLLMStream, Status: Skipped, Reason: "no stream from vLLM"})
	}
	if !slices.Equal(strm.OutputTokenIDs(), batch.OutputTokenIDs()) {
		// Greedy decoding is not batch-invariant in vLLM: the two runs may
		// generate different tokens, and then no answer compares.
		reason := "vLLM generated different tokens for the streaming and the non-streaming request (sampling not reproducible on this server)"
		return append(out, Result{Check: CheckParserStrm, Status: Skipped, Reason: reason},
			Result{Check: CheckVLLMStream, Status: Skipped, Reason: reason})
	}
	if strm.PromptTokenIDs != nil {
		prompt = strm.PromptTokenIDs
	}
	// The engine's reason comes from the non-streaming answer: vLLM's
	// stream says "tool_calls" even where the non-streaming answer keeps
	// "length".
	ours, err := r.derenderStream(chatReq, stop, prompt, strm.Chunks, r.engineFinish(want.FinishReason, batch.OutputTokenIDs(), stop))
	res := Result{Check: CheckParserStrm, VLLM: &want}
	if err != nil {
		res.Status, res.Reason = Fail, "vrender derender failed: "+err.Error()
	} else {
		res.VRender = &ours
		res.Differences = compareAnswers(want, ours, true)
		res.Status, res.Reason = classifyStream(want, strm.Answer, ours, res.Differences)
	}
	got := strm.Answer
	vs := Result{Check: CheckVLLMStream, Status: Pass, VLLM: &want, VLLMStream: &got,
		Differences: compareAnswersAs(want, got, true, vllmVsStream)}
	if len(vs.Differences) > 0 {
		vs.Status, vs.Reason = Known, "vLLM stream/non-stream divergence: vLLM's own stream accumulates to another answer "+
			"than its non-streaming one (vrender's stream is held to the non-streaming answer)"
	}
	return append(out, res, vs)
}

func (r *runner) batchResult(chatReq *protocol.ChatCompletionRequest, stop derender.StopConfig, prompt []int, batch *Completion) Result {
	want := batch.Answer
	res := Result{Check: CheckParserBatch, VLLM: &want}
	ids := batch.OutputTokenIDs()
	ours, err := r.derenderBatch(chatReq, stop, prompt, ids, r.engineFinish(want.FinishReason, ids, stop))
	if err != nil {
		res.Status, res.Reason = Fail, "vrender derender failed: "+err.Error()
		return res
	}
	res.VRender = &ours
	res.Differences = compareAnswers(want, ours, false)
	res.Status, res.Reason = classify(want, ours, res.Differences)
	return res
}
