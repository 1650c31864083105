// Package derender turns token-in/token-out engine output back into OpenAI
// answers, as vLLM's derender endpoints do: batch and streaming, chat (with
// reasoning and tool-call parsing) and completions. A streaming call with
// a parser resumes a live parser and detokenizer from an LRU cache keyed by
// a digest of everything that determines their state, so a hit costs
// O(delta); a miss replays the echoed history with identical output.
package derender

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/vrender/vrender/internal/telemetry"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/parsers"
)

// DefaultMaxNSequences is vLLM's default VLLM_MAX_N_SEQUENCES.
const DefaultMaxNSequences = 256

// Config is the derender part of the server flags.
type Config struct {
	// Parsers selects the reasoning and tool parsers.
	Parsers parsers.Config
	// MaxLogprobs is --max-logprobs (-1: no limit).
	MaxLogprobs int
	// MaxNSequences is VLLM_MAX_N_SEQUENCES; 0 means DefaultMaxNSequences.
	MaxNSequences int
	// CacheSize is --derender-cache-size: live streaming states kept; 0
	// disables the cache (every call replays).
	CacheSize int
	// ReasoningFieldCompat adds reasoning_content beside reasoning.
	ReasoningFieldCompat bool
}

// Engine derenders for one model. It is safe for concurrent use.
type Engine struct {
	model *model.Model
	cfg   Config
	cache *lru.Cache[digest, *live] // nil when disabled
	stops map[int]bool
	// harmony: the model is gpt-oss, whose parser reads every token
	// (OnlineDerenderer.use_harmony).
	harmony bool
	now     func() time.Time
	// stateKey signs checkpoints (SetStateKey; random per engine if unset).
	stateKey []byte
	macs     *sync.Pool // HMAC states for stateKey
	seals    sync.Pool  // *sealScratch
	// ckCache holds live states by the checkpoint they last issued: a
	// client echoing it resumes them without verifying or replaying.
	ckCache *lru.Cache[string, *live] // nil when disabled
	// reqCache holds decoded chat requests (RequestCache).
	reqCache *requestCache

	hits, misses atomic.Int64
	// ckptHits and ckptRestores count checkpoint resumes from ckCache and
	// from the checkpoint itself.
	ckptHits, ckptRestores atomic.Int64

	// stages times detokenizing and parsing (SetStages).
	stages atomic.Pointer[telemetry.Stages]
}

// SetStages makes the engine time its detokenize and parse stages into st
// (nil stops timing). States cached before the call keep the recorder
// they were built with.
func (e *Engine) SetStages(st *telemetry.Stages) { e.stages.Store(st) }

// BadRequestError is a request vLLM answers with 400.
type BadRequestError struct{ Message string }

func (e *BadRequestError) Error() string { return e.Message }

func badRequest(format string, args ...any) error {
	return &BadRequestError{Message: fmt.Sprintf(format, args...)}
}

// New builds an engine; the parsers named in cfg must be registered.
func New(m *model.Model, cfg Config) (*Engine, error) {
	if m == nil || m.Tokenizer == nil {
		return nil, errors.New("derender: a model with a tokenizer is required")
	}
	if cfg.Parsers.ReasoningParser != "" && !parsers.HasReasoning(cfg.Parsers.ReasoningParser) {
		return nil, fmt.Errorf("derender: unknown reasoning parser %q", cfg.Parsers.ReasoningParser)
	}
	if cfg.Parsers.ToolParser != "" && !parsers.HasTool(cfg.Parsers.ToolParser) {
		return nil, fmt.Errorf("derender: unknown tool parser %q", cfg.Parsers.ToolParser)
	}
	harmony := m.UsesHarmony()
	if err := checkHarmonyParsers(harmony, cfg.Parsers); err != nil {
		return nil, err
	}
	if cfg.MaxNSequences <= 0 {
		cfg.MaxNSequences = DefaultMaxNSequences
	}
	e := &Engine{model: m, cfg: cfg, now: time.Now, stops: map[int]bool{}, stateKey: NewStateKey(), reqCache: newRequestCache(),
		harmony: harmony}
	e.macs = newMACPool(e.stateKey)
	for _, id := range m.EOSTokenIDs {
		e.stops[id] = true
	}
	if cfg.CacheSize > 0 {
		c, err := lru.New[digest, *live](cfg.CacheSize)
		if err != nil {
			return nil, fmt.Errorf("derender: cache: %w", err)
		}
		e.cache = c
		if e.ckCache, err = lru.New[string, *live](cfg.CacheSize); err != nil {
			return nil, fmt.Errorf("derender: cache: %w", err)
		}
	}
	return e, nil
}

// checkHarmonyParsers is HarmonyParser's check: on a gpt-oss model the
// parsers must be the Harmony ones. vLLM raises it per request; vrender
// refuses at start. The tool parser counts only with auto tool choice, as
// vLLM instantiates it only then.
func checkHarmonyParsers(harmony bool, cfg parsers.Config) error {
	if !harmony {
		return nil
	}
	if r := cfg.ReasoningParser; r != "" && r != "openai_gptoss" {
		return fmt.Errorf("derender: Harmony requires GptOssReasoningParser (openai_gptoss), got %s", r)
	}
	if t := cfg.ToolParser; cfg.EnableAutoToolChoice && t != "" && t != "openai" {
		return fmt.Errorf("derender: Harmony requires GptOssToolParser (openai), got %s", t)
	}
	return nil
}

// Harmony reports whether the model's output is Harmony (gpt-oss).
func (e *Engine) Harmony() bool { return e.harmony }

// HasParser reports whether a reasoning or tool parser is configured.
func (e *Engine) HasParser() bool {
	return e.cfg.Parsers.ReasoningParser != "" || e.cfg.Parsers.ToolParser != ""
}

// CacheLen is the number of live states cached (for tests and metrics).
func (e *Engine) CacheLen() int {
	if e.cache == nil {
		return 0
	}
	return e.cache.Len() + e.ckCache.Len()
}

// CacheStats reports how many parsed streaming calls resumed a live state
// (hits) and how many replayed the history (misses).
func (e *Engine) CacheStats() (hits, misses int64) { return e.hits.Load(), e.misses.Load() }

// CheckpointStats reports how many checkpoint resumes found their live
// state cached (hits) and how many rebuilt it from the checkpoint.
func (e *Engine) CheckpointStats() (hits, restores int64) {
	return e.ckptHits.Load(), e.ckptRestores.Load()
}
