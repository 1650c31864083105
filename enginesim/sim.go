package enginesim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/internal/telemetry"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/tokenizer"
)

// maxRecorded bounds Requests() and Aborts(): a long benchmark run must not
// grow the sim without limit, so beyond it the oldest half is dropped.
const maxRecorded = 1 << 16

// Sim is a simulated tokens-only engine. It is safe for concurrent use.
type Sim struct {
	model      *model.Model
	tok        *tokenizer.Tokenizer
	cfg        Config
	log        *slog.Logger
	servedName string
	vocabSize  int
	kit        answerKit
	kv         kvTransfer
	kvm        kvMetrics
	cache      *prefixCache                 // nil without a prefix cache
	items      *features.ItemLRU[seenImage] // the multimodal items requests brought (itemcache.go)
	decoded    *decodedItems                // their bytes, by their base64 text
	// accepted and promptTokens count accepted generate requests and
	// their prompt tokens (/metrics).
	accepted, promptTokens atomic.Int64
	// itemMisses counts requests failed for null items the item cache
	// did not hold.
	itemMisses atomic.Int64
	queue      schedulerQueue
	version    simVersion
	now        func() time.Time

	mu       sync.Mutex
	requests []protocol.GenerateRequest
	aborts   []string
	aborted  map[string]bool          // every id in aborts
	running  map[string][]*generation // engine request id -> live generations
	changed  chan struct{}            // closed and replaced when an abort is recorded
}

// New builds a simulated engine for m.
func New(m *model.Model, cfg Config) (*Sim, error) {
	if m == nil || m.Tokenizer == nil {
		return nil, errors.New("enginesim: a model with a tokenizer is required")
	}
	if err := cfg.Fault.Validate(); err != nil {
		return nil, fmt.Errorf("enginesim: %w", err)
	}
	if err := ValidateKVRole(cfg.KVRole); err != nil {
		return nil, fmt.Errorf("enginesim: %w", err)
	}
	if cfg.FirstTokenLatency < 0 || cfg.TokenLatency < 0 {
		return nil, errors.New("enginesim: latencies must not be negative")
	}
	if cfg.PrefixCacheBlocks < 0 || cfg.BlockSize < 0 || cfg.PrefillTokenLatency < 0 {
		return nil, errors.New("enginesim: prefix cache blocks, block size and prefill token latency must not be negative")
	}
	if cfg.KVEvents != nil && cfg.PrefixCacheBlocks == 0 {
		return nil, errors.New("enginesim: KV events need a prefix cache (PrefixCacheBlocks)")
	}
	if cfg.MaxNumSeqs < 0 {
		return nil, fmt.Errorf("enginesim: max_num_seqs %d is negative", cfg.MaxNumSeqs)
	}
	if cfg.MaxNumSeqs == 0 {
		cfg.MaxNumSeqs = defaultMaxNumSeqs
	}
	if err := ValidateLogprobsShape(cfg.LogprobsShape); err != nil {
		return nil, fmt.Errorf("enginesim: %w", err)
	}
	if cfg.MaxLogprobs < -1 {
		return nil, fmt.Errorf("enginesim: max_logprobs %d must be -1 or at least 0", cfg.MaxLogprobs)
	}
	if cfg.MaxLogprobs == 0 {
		cfg.MaxLogprobs = defaultMaxLogprobs
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	name := cfg.ServedModelName
	if name == "" {
		name = m.Path
	}
	if err := protocol.ValidateLoRAModules(cfg.LoRAModules, append([]string{name}, cfg.ServedModelAliases...)); err != nil {
		return nil, fmt.Errorf("enginesim: %w", err)
	}
	s := &Sim{
		model:      m,
		tok:        m.Tokenizer,
		cfg:        cfg,
		log:        log,
		servedName: name,
		vocabSize:  vocabSize(m),
		kit:        newAnswerKit(m),
		kv:         newKVTransfer(),
		kvm:        kvMetrics{xferTime: telemetry.NewHistogram(xferTimeBuckets), xferSize: telemetry.NewValueHistogram(xferByteBuckets)},
		now:        time.Now,
		items:      features.NewItemLRU[seenImage](cfg.itemCacheBytes()),
		decoded:    newDecodedItems(decodedItemBytes),
		aborted:    map[string]bool{},
		running:    map[string][]*generation{},
		changed:    make(chan struct{}),
	}
	if cfg.PrefixCacheBlocks > 0 {
		var sink *eventSink
		if cfg.KVEvents != nil {
			sink = &eventSink{pub: cfg.KVEvents, log: log, now: time.Now}
		}
		s.cache = newPrefixCache(cfg.PrefixCacheBlocks, cfg.BlockSize, sink)
	}
	return s, nil
}

// vocabSize is the engine's vocabulary: config.json's vocab_size (the
// embedding rows, which a tokens-only server checks against), else the
// tokenizer's size.
func vocabSize(m *model.Model) int {
	if v, ok := m.Config["vocab_size"].(float64); ok && v > 0 {
		return int(v)
	}
	return m.Tokenizer.Len()
}

// Handler serves the engine's routes.
func (s *Sim) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /inference/v1/generate", s.handleGenerate)
	mux.HandleFunc("POST /inference/v1/abort_requests", s.handleAbort)
	mux.HandleFunc("POST /abort_requests", s.handleAbort)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /v1/models", s.handleModels)
	mux.HandleFunc("GET /version", s.handleVersion)
	mux.HandleFunc("GET /metrics", s.handleMetrics)
	mux.HandleFunc("POST /reset_prefix_cache", s.handleResetPrefixCache)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, protocol.NewHTTPErrorResponse(http.StatusNotFound, "Not Found"))
	})
	return requireKey(s.cfg.APIKeys, mux)
}

// handleModels lists the served model, then the LoRA adapters, as vLLM's
// show_available_models does.
func (s *Sim) handleModels(w http.ResponseWriter, r *http.Request) {
	cards := protocol.ModelCards([]string{s.servedName}, s.model.Path, s.model.MaxModelLen, s.cfg.LoRAModules, s.now())
	writeJSON(w, http.StatusOK, protocol.NewModelList(cards))
}

// resolveModel is vLLM's _check_model and _maybe_get_adapters for a
// generate request's model (vllm/entrypoints/serve/engine/serving.py): an
// absent or empty model or the served name is the base model (lora ""),
// an adapter's name that adapter; anything else is not known (404).
func (s *Sim) resolveModel(model *string) (lora string, known bool) {
	if model == nil || *model == "" || *model == s.servedName || slices.Contains(s.cfg.ServedModelAliases, *model) {
		return "", true
	}
	if s.adapterID(*model) > 0 {
		return *model, true
	}
	return "", false
}

// adapterID is the engine-local id vLLM gives an adapter (lora_int_id:
// 1, 2, … in --lora-modules order, as init_static_loras loads them); 0
// when name is no adapter.
func (s *Sim) adapterID(name string) int64 {
	for i, l := range s.cfg.LoRAModules {
		if l.Name == name {
			return int64(i + 1)
		}
	}
	return 0
}

// Requests returns every accepted generate request, in arrival order
// (the most recent ones once more than 65536 were seen).
func (s *Sim) Requests() []protocol.GenerateRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]protocol.GenerateRequest(nil), s.requests...)
}

// Aborts returns the engine request ids aborted so far, by an abort call or
// by the client going away before the request finished, in order.
func (s *Sim) Aborts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.aborts...)
}

// WaitAbort waits until engineRequestID has been aborted or ctx is done.
// An id that vrender's orchestrator made unique (engineRequestID, '-', a
// suffix) counts as the same.
func (s *Sim) WaitAbort(ctx context.Context, engineRequestID string) error {
	for {
		s.mu.Lock()
		done, changed := s.aborted[engineRequestID], s.changed
		for id := range s.aborted {
			if strings.HasPrefix(id, engineRequestID+"-") {
				done = true
			}
		}
		s.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("wait for abort of %s: %w", engineRequestID, ctx.Err())
		}
	}
}

func (s *Sim) recordRequest(req *protocol.GenerateRequest) {
	s.observeKV(req)
	s.accepted.Add(1)
	s.promptTokens.Add(int64(len(req.TokenIDs)))
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) >= maxRecorded {
		s.requests = append(s.requests[:0], s.requests[maxRecorded/2:]...)
	}
	s.requests = append(s.requests, *req)
}

// recordAbort notes an aborted id and wakes WaitAbort callers.
func (s *Sim) recordAbort(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recordAbortLocked(id)
}

func (s *Sim) recordAbortLocked(id string) {
	if len(s.aborts) >= maxRecorded {
		for _, old := range s.aborts[:maxRecorded/2] {
			delete(s.aborted, old)
		}
		s.aborts = append(s.aborts[:0], s.aborts[maxRecorded/2:]...)
	}
	s.aborts = append(s.aborts, id)
	s.aborted[id] = true
	close(s.changed)
	s.changed = make(chan struct{})
}

// register makes a generation abortable by its engine request id.
func (s *Sim) register(g *generation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running[g.id] = append(s.running[g.id], g)
}

func (s *Sim) unregister(g *generation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.running[g.id]
	for i, x := range list {
		if x == g {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(s.running, g.id)
	} else {
		s.running[g.id] = list
	}
}

// abort records ids as aborted and stops the generations running under them.
func (s *Sim) abort(ids []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		for _, g := range s.running[id] {
			g.stop()
		}
		s.recordAbortLocked(id)
	}
}
