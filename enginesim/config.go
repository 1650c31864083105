package enginesim

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/vrender/vrender/protocol"
)

// Config tunes a Sim.
type Config struct {
	// APIKeys, when set, are the bearer keys every path but GET /health
	// demands (vLLM's --api-key); serve passes its own keys to an
	// in-process sim.
	APIKeys []string
	// ServedModelName is the "model" the sim reports and accepts; "" means
	// the model path, as vLLM defaults --served-model-name.
	ServedModelName string
	// ServedModelAliases are further names the sim accepts for the base
	// model, as vLLM's engine accepts every --served-model-name (answers
	// still report ServedModelName, the first).
	ServedModelAliases []string
	// LoRAModules are vLLM's --lora-modules: a generate request whose
	// model names one is served "with" that adapter (its answer reports
	// the adapter's name, its prompt blocks are keyed apart and its KV
	// events carry lora_name); any other unknown model gets vLLM's 404.
	LoRAModules []protocol.LoRAModulePath
	// Script gives per-prompt outputs; nil means the built-in behaviour
	// (a reasoning model that calls the first rendered tool).
	Script *Script
	// FirstTokenLatency is slept before a request's first token,
	// TokenLatency before every later one.
	FirstTokenLatency, TokenLatency time.Duration
	// Fault is applied to every request unless a script entry sets its own.
	Fault Fault
	// MaxNumSeqs is vLLM's max_num_seqs: a request with n above it is
	// refused with 400. 0 means 256, vLLM's default.
	MaxNumSeqs int
	// MaxLogprobs is vLLM's --max-logprobs: a request asking for more
	// sample or prompt logprobs is refused with 400. 0 means 20, vLLM's
	// default; -1 means the vocabulary size.
	MaxLogprobs int
	// LogprobsShape is the wire shape of output logprobs:
	// LogprobsShapeOpenAI ("" too), what vLLM's generate writes today, or
	// LogprobsShapeGenerate, the GenerateLogProbs of vllm PR #58181.
	LogprobsShape string
	// Logger receives per-request debug records; nil means slog.Default().
	Logger *slog.Logger

	// KVRole is the engine's part in disaggregated serving: KVRoleBoth
	// ("" too), KVRoleProducer or KVRoleConsumer. A request the role does
	// not serve is refused with 400 (see the constants).
	KVRole string
	// KVRegistry, shared by the producer and consumer sims of one
	// process, makes a consumer accept only KV blocks a producer issued,
	// each once; nil checks the parameters' form only.
	KVRegistry *KVRegistry
	// KVTransferLatency replaces FirstTokenLatency for a decode request
	// whose prompt's KV cache comes from a prefill engine: the transfer
	// and one decode step instead of a prefill. 0 means TokenLatency.
	KVTransferLatency time.Duration
	// SerialPrefill runs prefills one at a time and stalls decoding while
	// one runs, as one batch-at-a-time engine does (see prefillGate).
	SerialPrefill bool

	// PrefixCacheBlocks is the KV cache's capacity in blocks for the
	// automatic prefix cache (vLLM's --num-gpu-blocks-override); 0 means
	// no prefix cache: every prompt is computed in full.
	PrefixCacheBlocks int
	// BlockSize is the KV block size in tokens (vLLM's --block-size);
	// 0 means 16.
	BlockSize int
	// PrefillTokenLatency is added to a request's first-token latency for
	// every prompt token the prefix cache did not hold (every token
	// without a prefix cache).
	PrefillTokenLatency time.Duration
	// EnablePromptTokensDetails reports usage.prompt_tokens_details
	// {"cached_tokens":N}, as vLLM's --enable-prompt-tokens-details.
	EnablePromptTokensDetails bool
	// KVEvents, with a prefix cache, receives its changes as vLLM's KV
	// events (BlockStored, BlockRemoved, AllBlocksCleared).
	KVEvents EventPublisher

	// MMProcessorCacheBytes bounds the engine's multimodal item cache
	// (vLLM's --mm-processor-cache-gb, here in bytes; see itemcache.go):
	// 0 means vLLM's default, 4 GiB; negative means no cache, so every
	// null kwargs item fails its request.
	MMProcessorCacheBytes int64
}

// defaultMMProcessorCacheBytes is vLLM's mm_processor_cache_gb default, 4,
// times GiB_bytes.
const defaultMMProcessorCacheBytes = 4 << 30

func (c Config) itemCacheBytes() int64 {
	switch {
	case c.MMProcessorCacheBytes == 0:
		return defaultMMProcessorCacheBytes
	case c.MMProcessorCacheBytes < 0:
		return 0
	}
	return c.MMProcessorCacheBytes
}

// Output logprobs shapes (Config.LogprobsShape).
const (
	// LogprobsShapeOpenAI is vLLM's generate output today: OpenAI
	// ChatCompletionLogProbs with "token_id:N" placeholders for token and
	// "bytes": null (vllm scale_out/token_in_token_out/serving.py
	// _create_tokens_logprobs).
	LogprobsShapeOpenAI = "openai"
	// LogprobsShapeGenerate is GenerateLogProb{token_id, logprob, rank}
	// with top_logprobs a list in rank order and no bytes or token
	// (vllm issue #57574, PR #58181).
	LogprobsShapeGenerate = "generate"
)

// ValidateLogprobsShape reports a shape the sim cannot write.
func ValidateLogprobsShape(shape string) error {
	switch shape {
	case "", LogprobsShapeOpenAI, LogprobsShapeGenerate:
		return nil
	}
	return fmt.Errorf("unknown logprobs shape %q (want openai or generate)", shape)
}

// Fault kinds.
const (
	FaultNone   = ""
	FaultRefuse = "refuse" // close the connection without a response
	FaultError  = "500"    // answer with the engine's 500 error (in-stream after AfterTokens events)
	FaultDrop   = "drop"   // close the stream after AfterTokens events, without [DONE]
	FaultStall  = "stall"  // stop sending after AfterTokens events until the client goes away
)

// Fault is an injected failure.
type Fault struct {
	// Kind is one of the Fault* constants; "" means no fault.
	Kind string
	// AfterTokens is how many events (streaming) are sent before the
	// fault strikes; refuse ignores it.
	AfterTokens int
	// Rate is the probability that a request gets the fault; 0 means
	// always (when Kind is set).
	Rate float64
}

// Validate reports a fault that cannot be applied.
func (f Fault) Validate() error {
	switch f.Kind {
	case FaultNone, FaultRefuse, FaultError, FaultDrop, FaultStall:
	default:
		return fmt.Errorf("unknown fault kind %q (want refuse, 500, drop or stall)", f.Kind)
	}
	if f.AfterTokens < 0 {
		return fmt.Errorf("fault after_tokens %d is negative", f.AfterTokens)
	}
	if f.Rate < 0 || f.Rate > 1 {
		return fmt.Errorf("fault rate %v is outside [0, 1]", f.Rate)
	}
	return nil
}

// defaultMaxNumSeqs is vLLM's default max_num_seqs.
const defaultMaxNumSeqs = 256

// defaultMaxLogprobs is vLLM's default --max-logprobs.
const defaultMaxLogprobs = 20
