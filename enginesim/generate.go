package enginesim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
)

// requestIDHeader is the header whose value names the request, as vLLM's
// _base_request_id reads it.
const requestIDHeader = "X-Request-Id"

// engineErrorMessage is what a dead vLLM engine reports (EngineDeadError).
const engineErrorMessage = "EngineCore encountered an issue. See stack trace (above) for the root cause."

// generation is one accepted generate request on its way out.
type generation struct {
	id              string
	idJSON          []byte
	req             *protocol.GenerateRequest
	plans           []choicePlan
	promptLen       int
	vocab           int
	logprobs        *int
	generateShape   bool // logprobs in LogprobsShapeGenerate
	includeUsage    bool
	continuousUsage bool
	returnTokenIDs  bool
	kvResponse      json.RawMessage
	firstLatency    time.Duration
	tokenLatency    time.Duration
	fault           Fault // Kind "" when this request gets none
	// gate serialises prefills (Config.SerialPrefill); nil otherwise.
	gate *prefillGate
	// remotePrefill: the prompt's KV cache came from a prefill engine, so
	// the first step is a decode step, not a prefill.
	remotePrefill bool
	waits         int // wait calls so far: the step being waited for
	// cache, when set, stores the prompt's blocks (hashes) once its
	// prefill is done; cachedDetails is usage's cached_tokens when
	// reported.
	cache         *prefixCache
	hashes        []uint64
	scope         blockScope
	cachedDetails *int
	// lora is the LoRA adapter the request names in its model ("" for the
	// base model); it keys the prompt's blocks and is the answer's model.
	lora string
	// missing are the hashes of null kwargs items the item cache lacks:
	// the request is answered by answerMiss.
	missing []string
	// queue counts the generation as waiting until its first step starts,
	// then as running (scheduled) until it ends; nil once it left.
	queue     *schedulerQueue
	scheduled bool

	stopCh   chan struct{} // closed by an abort call
	stopOnce sync.Once
}

func (g *generation) stop() { g.stopOnce.Do(func() { close(g.stopCh) }) }

func (g *generation) stopped() bool {
	select {
	case <-g.stopCh:
		return true
	default:
		return false
	}
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func (s *Sim) handleGenerate(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Fault.Kind == FaultRefuse && s.faultStrikes(s.cfg.Fault) {
		refuse(w)
		return
	}
	body, root, apiErr := readJSONBody(w, r)
	if apiErr != nil {
		apiErr.write(w)
		return
	}
	req, info, err := protocol.DecodeGenerateRequestTree(body, root)
	if err != nil {
		var ve *pylax.ValidationError
		if errors.As(err, &ve) {
			writeError(w, http.StatusBadRequest, protocol.NewValidationErrorResponse(ve))
			return
		}
		badRequest(err.Error()).write(w)
		return
	}
	featuresNode, _ := root.Get("features") // the member req.Features holds, validated
	g, apiErr := s.accept(r, req, info, featuresNode)
	if apiErr != nil {
		apiErr.write(w)
		return
	}
	if g.missing != nil {
		s.answerMiss(w, g)
		return
	}
	if g.fault.Kind == FaultRefuse {
		refuse(w)
		return
	}
	s.register(g)
	defer s.unregister(g)
	g.enqueue(&s.queue)
	defer g.dequeue()
	if req.Stream != nil && *req.Stream {
		s.stream(w, r, g)
	} else {
		s.respond(w, r, g)
	}
	if g.waits == 0 && !g.stopped() {
		g.prefilled() // no latency: nothing was waited for
	}
}

// handleResetPrefixCache is vLLM's POST /reset_prefix_cache: the cache is
// emptied (AllBlocksCleared).
func (s *Sim) handleResetPrefixCache(w http.ResponseWriter, r *http.Request) {
	if s.cache != nil {
		s.cache.reset()
	}
	w.WriteHeader(http.StatusOK)
}

// accept runs the serving-layer checks of vLLM's serve_tokens, in its order,
// and plans the outputs.
func (s *Sim) accept(r *http.Request, req *protocol.GenerateRequest, info protocol.GenerateRequestInfo, features *wire.Node) (*generation, *apiError) {
	lora, known := s.resolveModel(req.Model)
	if !known {
		param := "model"
		return nil, &apiError{http.StatusNotFound, protocol.NewErrorResponse(http.StatusNotFound,
			protocol.ErrorTypeNotFound, "The model `"+*req.Model+"` does not exist.", &param)}
	}
	base := req.RequestID
	if h := r.Header.Get(requestIDHeader); h != "" {
		base = h
	}
	id := "generate-tokens-" + base
	p := &req.SamplingParams
	if e := s.checkGenerate(req); e != nil {
		return nil, e
	}
	mm, apiErr := s.acceptFeatures(req, features)
	if apiErr != nil {
		return nil, apiErr
	}
	if len(mm.missing) > 0 {
		// The engine core fails the request before scheduling it: no KV
		// transfer is started (a decode leg's blocks stay for the retry),
		// but the items it brought are kept.
		s.addItems(mm.brought)
		return &generation{id: id, idJSON: wire.AppendString(nil, id), req: req, promptLen: len(req.TokenIDs),
			lora: lora, missing: mm.missing}, nil
	}
	kv, apiErr := s.acceptKV(req, id)
	if apiErr != nil {
		return nil, apiErr
	}
	s.addItems(mm.brought)
	s.recordRequest(req)

	g := &generation{
		id:            id,
		lora:          lora,
		idJSON:        wire.AppendString(nil, id),
		req:           req,
		promptLen:     len(req.TokenIDs),
		vocab:         s.vocabSize,
		generateShape: s.cfg.LogprobsShape == LogprobsShapeGenerate,
		logprobs:      p.Logprobs,
		firstLatency:  s.cfg.FirstTokenLatency,
		tokenLatency:  s.cfg.TokenLatency,
		stopCh:        make(chan struct{}),
	}
	if so := req.StreamOptions; so != nil && so.IncludeUsage != nil && *so.IncludeUsage {
		g.includeUsage = true
		g.continuousUsage = so.ContinuousUsageStats != nil && *so.ContinuousUsageStats
	}
	g.returnTokenIDs = req.ReturnTokenIDs != nil && *req.ReturnTokenIDs
	g.kvResponse, g.remotePrefill = kv.response, kv.remotePrefill
	if s.cfg.SerialPrefill {
		g.gate = s.kv.gate
	}

	prompt := s.tok.Decode(req.TokenIDs, false)
	entry := s.cfg.Script.lookup(prompt)
	s.timing(g, entry)
	g.scope.mm = mm.items
	s.planPrefill(g)
	s.planChoices(g, info, prompt, entry, mm.images)
	s.log.Debug("enginesim: generate", "request_id", id, "prompt_tokens", len(req.TokenIDs), "n", p.N,
		"stream", req.Stream != nil && *req.Stream, "fault", g.fault.Kind)
	return g, nil
}

// checkGenerate refuses what a tokens-only vLLM engine refuses before it
// schedules a request, with vLLM's messages.
func (s *Sim) checkGenerate(req *protocol.GenerateRequest) *apiError {
	p := &req.SamplingParams
	switch {
	case p.N > s.cfg.MaxNumSeqs:
		return badRequest(fmt.Sprintf("sampling_params.n must be at most the server's max_num_seqs (%d), got %d.", s.cfg.MaxNumSeqs, p.N))
	case len(p.Stop) > 0:
		return badRequest("stop strings are not supported on a --tokens-only server because detokenization is disabled. " +
			"Check stop strings on the coordinator, or use stop_token_ids.")
	case req.OutputMode != protocol.OutputModeTokens:
		return badRequest("output_mode='" + req.OutputMode + "' requires a tokenizer, " +
			"but this server does not load one (--tokens-only or --skip-tokenizer-init). " +
			"Send the request to a server that loads a tokenizer, or use output_mode='tokens'.")
	case len(req.ContentParts) > 0 && string(req.ContentParts) != "[]" && string(req.ContentParts) != "null":
		return badRequest("simulated engine: content_parts are not supported (send rendered features)")
	}
	if e := s.checkLogprobs(p); e != nil {
		return e
	}
	maxID := 0
	for _, t := range req.TokenIDs {
		maxID = max(maxID, t)
	}
	if maxID >= s.vocabSize {
		return badRequest(fmt.Sprintf("Token id %d is out of vocabulary", maxID))
	}
	if mml := s.model.MaxModelLen; mml > 0 && len(req.TokenIDs) > mml {
		return badRequest(fmt.Sprintf("The decoder prompt (length %d) is longer than the maximum model length of %d. "+
			"Make sure that `max_model_len` is no smaller than the number of text tokens.", len(req.TokenIDs), mml))
	}
	return nil
}

// timing sets the generation's latencies and fault: the configured ones,
// a remote prefill's, then a script entry's.
func (s *Sim) timing(g *generation, entry *scriptEntry) {
	fault := s.cfg.Fault
	if g.remotePrefill {
		g.firstLatency = g.tokenLatency
		if s.cfg.KVTransferLatency > 0 {
			g.firstLatency = s.cfg.KVTransferLatency
		}
	}
	if entry != nil {
		if entry.firstTokenLatency != nil {
			g.firstLatency = *entry.firstTokenLatency
		}
		if entry.tokenLatency != nil {
			g.tokenLatency = *entry.tokenLatency
		}
		if entry.fault != nil {
			fault = *entry.fault
		}
	}
	if fault.Kind != FaultNone && s.faultStrikes(fault) {
		g.fault = fault
	}
}

// planChoices plans each choice's tokens: the script entry's, or an
// answer made from the prompt (the images described).
func (s *Sim) planChoices(g *generation, info protocol.GenerateRequestInfo, prompt string, entry *scriptEntry, images []seenImage) {
	req, p := g.req, &g.req.SamplingParams
	limits := s.kit.limitsFor(p, info.MaxTokensSet, len(req.TokenIDs), s.model.MaxModelLen)
	seed := promptSeed(req, prompt)
	g.plans = make([]choicePlan, p.N)
	for i := range g.plans {
		variant := choiceVariant(seed, i)
		if entry != nil {
			g.plans[i] = s.kit.plan(entry.tokens, entry.eos, limits)
			continue
		}
		ids, eos := s.kit.answer(req, prompt, variant, describeImages(images))
		g.plans[i] = s.kit.plan(ids, eos, limits)
	}
}

// planPrefill looks the prompt up in the prefix cache and adds the time to
// compute the tokens it does not hold to the first-token latency. A
// prompt whose KV cache came from a prefill engine computes nothing.
func (s *Sim) planPrefill(g *generation) {
	if g.remotePrefill {
		return
	}
	cached := 0
	if s.cache != nil {
		g.scope.lora = g.lora
		if g.lora != "" {
			g.scope.loraID = s.adapterID(g.lora)
		}
		if g.req.CacheSalt != nil {
			g.scope.salt = *g.req.CacheSalt
		}
		cached, g.hashes = s.cache.lookup(g.req.TokenIDs, g.scope)
		g.cache = s.cache
	}
	g.firstLatency += time.Duration(g.promptLen-cached) * s.cfg.PrefillTokenLatency
	if s.cfg.EnablePromptTokensDetails {
		g.cachedDetails = &cached
	}
}

// prefilled stores the prompt's blocks in the prefix cache, once.
func (g *generation) prefilled() {
	if g.cache == nil {
		return
	}
	g.cache.store(g.req.TokenIDs, g.scope, g.hashes)
	g.cache, g.hashes = nil, nil
}

// promptSeed makes outputs deterministic: the request's seed when given,
// else a hash of the prompt (same prompt, same answer, like greedy decoding).
func promptSeed(req *protocol.GenerateRequest, prompt string) uint64 {
	if req.SamplingParams.Seed != nil {
		return uint64(*req.SamplingParams.Seed)
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(prompt))
	return h.Sum64()
}

// choiceVariant picks choice i's answer variant from the seed.
func choiceVariant(seed uint64, i int) int {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	return r.IntN(1 << 20)
}

// faultStrikes decides whether a request gets the fault (Rate 0: always).
func (s *Sim) faultStrikes(f Fault) bool {
	return f.Rate == 0 || rand.Float64() < f.Rate
}

// refuse closes the connection without answering, as a crashed engine
// process or a full accept queue does.
func refuse(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler) // net/http drops the connection without logging
}

// wait sleeps d unless ctx ends or the generation is aborted first; it
// reports which happened.
func (g *generation) wait(ctx context.Context, d time.Duration) (aborted, gone bool) {
	aborted, gone = g.waitStep(ctx, d)
	if g.waits == 1 && !aborted && !gone {
		g.prefilled()
	}
	return aborted, gone
}

func (g *generation) waitStep(ctx context.Context, d time.Duration) (aborted, gone bool) {
	step := g.waits
	g.waits++
	if g.gate != nil {
		if step == 0 && !g.remotePrefill {
			return g.gate.prefill(ctx, g.stopCh, d, g.schedule)
		}
		g.schedule()
		return g.gate.decodeStep(ctx, g.stopCh, d)
	}
	g.schedule()
	if d <= 0 {
		select {
		case <-ctx.Done():
			return false, true
		case <-g.stopCh:
			return true, false
		default:
			return false, false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false, true
	case <-g.stopCh:
		return true, false
	case <-t.C:
		return false, false
	}
}

// clientGone records an abort for a generation whose client went away,
// unless an abort call already did.
func (s *Sim) clientGone(g *generation) {
	if !g.stopped() {
		s.recordAbort(g.id)
		s.log.Debug("enginesim: client went away", "request_id", g.id)
	}
}

// steps is how many engine steps the longest choice takes; a choice with no
// tokens still has a step for its terminal output.
func (g *generation) steps() int {
	n := 1
	for _, p := range g.plans {
		n = max(n, len(p.tokens))
	}
	return n
}

func (g *generation) latencyBefore(step int) time.Duration {
	if step == 0 {
		return g.firstLatency
	}
	return g.tokenLatency
}

// respond serves a non-streaming request.
func (s *Sim) respond(w http.ResponseWriter, r *http.Request, g *generation) {
	ctx := r.Context()
	if g.fault.Kind == FaultError {
		writeError(w, http.StatusInternalServerError, protocol.NewErrorResponse(http.StatusInternalServerError,
			protocol.ErrorTypeInternal, engineErrorMessage, nil))
		return
	}
	done := g.steps() // steps completed; fewer when aborted
	aborted := false
	if g.firstLatency > 0 || g.tokenLatency > 0 || g.fault.Kind != FaultNone {
		for step := range g.steps() {
			if g.fault.Kind != FaultNone && step == g.fault.AfterTokens {
				s.applyHTTPFault(ctx, w, g)
				return
			}
			a, gone := g.wait(ctx, g.latencyBefore(step))
			if gone {
				s.clientGone(g)
				return
			}
			if a {
				done, aborted = step, true
				break
			}
		}
	} else if g.stopped() {
		done, aborted = 0, true
	}
	choices := make([]choiceFields, len(g.plans))
	for i, p := range g.plans {
		c := choiceFields{index: i, finish: p.finish, stopReason: p.stopReason, hasStop: p.hasStop, tokens: p.tokens, final: true}
		if aborted && done < len(p.tokens) {
			c = choiceFields{index: i, finish: "abort", tokens: p.tokens[:done], final: true}
		}
		c.total = len(c.tokens)
		choices[i] = c
	}
	bp := bufPool.Get().(*[]byte)
	model := s.servedName
	if g.lora != "" {
		model = g.lora // vLLM's model_name(lora_request)
	}
	b := g.appendResponse((*bp)[:0], model, s.now().Unix(), choices)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	*bp = b
	bufPool.Put(bp)
}

// applyHTTPFault applies drop or stall to a non-streaming request.
func (s *Sim) applyHTTPFault(ctx context.Context, w http.ResponseWriter, g *generation) {
	if g.fault.Kind == FaultStall {
		<-ctx.Done()
		s.clientGone(g)
		return
	}
	refuse(w) // drop: the connection closes with no response
}
