package protocol

import "encoding/json"

// OutputModeTokens is GenerateRequest.output_mode for a tokens-in/tokens-out
// engine; the render tier always asks for tokens.
const OutputModeTokens = "tokens"

// GenerateRequest is the body of the tokens-only engine's
// POST /inference/v1/generate, which the render endpoints return. It is a
// plain pydantic model dumped with model_dump(), so every key is present,
// nulls included.
//
// Key order follows the newest GenerateRequest described in vllm-api.md
// (§3.1, vllm/entrypoints/scale_out/token_in_token_out/protocol.py
// @006ebac2): request_id, token_ids, token_offsets, features, content_parts,
// sampling_params, model, reasoning_ended, reasoning_parser_kwargs,
// return_token_ids, output_mode, stream, stream_options, cache_salt,
// priority, kv_transfer_params, ec_transfer_params. The version read in
// full (mlow/vllm bf578e1) predates content_parts, reasoning_ended,
// reasoning_parser_kwargs, return_token_ids and output_mode and has an
// assistant_tokens_mask after token_ids instead; that field is left out
// because the newest schema does not list it and vrender does not compute
// assistant masks.
type GenerateRequest struct {
	RequestID             string          `json:"request_id"`
	TokenIDs              []int           `json:"token_ids"`
	TokenOffsets          [][2]int        `json:"token_offsets"`
	Features              json.RawMessage `json:"features"`      // multimodal only; null
	ContentParts          json.RawMessage `json:"content_parts"` // multimodal only; null
	SamplingParams        SamplingParams  `json:"sampling_params"`
	Model                 *string         `json:"model"`
	ReasoningEnded        *bool           `json:"reasoning_ended"`
	ReasoningParserKwargs json.RawMessage `json:"reasoning_parser_kwargs"`
	ReturnTokenIDs        *bool           `json:"return_token_ids"`
	OutputMode            string          `json:"output_mode"`
	Stream                *bool           `json:"stream"`
	StreamOptions         *StreamOptions  `json:"stream_options"`
	CacheSalt             *string         `json:"cache_salt"`
	Priority              int64           `json:"priority"`
	KVTransferParams      json.RawMessage `json:"kv_transfer_params"`
	ECTransferParams      json.RawMessage `json:"ec_transfer_params"`
}

// MarshalJSON writes JSON null for absent raw members (a nil RawMessage
// would otherwise be written as null too, but an empty one would be
// invalid) and keeps token_ids a list.
func (g GenerateRequest) MarshalJSON() ([]byte, error) {
	type plain GenerateRequest
	if g.TokenIDs == nil {
		g.TokenIDs = []int{}
	}
	for _, raw := range []*json.RawMessage{&g.Features, &g.ContentParts, &g.ReasoningParserKwargs,
		&g.KVTransferParams, &g.ECTransferParams} {
		if len(*raw) == 0 {
			*raw = nil
		}
	}
	return MarshalJSON(plain(g))
}

// StreamOptions is the OpenAI stream_options object (vLLM's StreamOptions;
// both default to false).
type StreamOptions struct {
	IncludeUsage         *bool `json:"include_usage"`
	ContinuousUsageStats *bool `json:"continuous_usage_stats"`
}
