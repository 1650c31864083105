package protocol

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/vrender/vrender/internal/wire"
)

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
	// features, when set (SetFeatures), writes the features member in
	// place of Features.
	features FeaturesWriter
}

// FeaturesWriter is vrender's own features writer (*features.Features):
// its JSON is compact, as json.dumps writes it, and valid by construction,
// so a body takes it as it is instead of compacting megabytes of
// kwargs_data again, and MaxJSONLen bounds it so that the body grows once.
type FeaturesWriter interface {
	AppendJSON(dst []byte) []byte
	MaxJSONLen() int
	// AppendBody is AppendJSON with the long parts (pending pixel values)
	// spliced into body as writers (wire.Body.SpliceFrom) rather than
	// built in it; SplicedLen is their length.
	AppendBody(dst []byte, body *wire.Body) []byte
	SplicedLen() int
}

// SetFeatures makes f write the features member, straight into the body.
// Features decoded from a body keep the compacting path.
func (g *GenerateRequest) SetFeatures(f FeaturesWriter) {
	g.Features = nil
	g.features = f
}

// FeaturesWriter is the writer SetFeatures gave (nil when none did).
func (g *GenerateRequest) FeaturesWriter() FeaturesWriter { return g.features }

// bodyTailSlack is room kept after the features member for the members
// after it (sampling params, ...), so that a body of megabytes of pixel
// values is not copied again for its last few hundred bytes.
const bodyTailSlack = 64 << 10

// BodySizeHint is about how many bytes AppendBody appends to the body's
// own buffer when the request carries features: 0 without them (a small
// body), else at least the features' MaxJSONLen less what is spliced in. A
// writer picks its buffer by it.
func (g *GenerateRequest) BodySizeHint() int {
	if g.features == nil {
		return 0
	}
	return g.features.MaxJSONLen() - g.features.SplicedLen() + bodyTailSlack + 8*len(g.TokenIDs)
}

// AppendJSON appends the body with every key, as pydantic's model_dump
// writes it: an absent raw member is null, token_ids always a list.
func (g *GenerateRequest) AppendJSON(dst []byte) ([]byte, error) {
	return g.appendJSON(dst, func(dst []byte) []byte {
		return g.features.AppendJSON(slices.Grow(dst, g.features.MaxJSONLen()+g.tailLen()))
	})
}

// AppendBody is AppendJSON into body (appended to body.B), with the
// features' cached parts spliced in rather than copied: an image answer
// reaches the connection without its megabytes passing through a buffer.
func (g *GenerateRequest) AppendBody(body *wire.Body) error {
	var err error
	body.B, err = g.appendJSON(body.B, func(dst []byte) []byte {
		return g.features.AppendBody(slices.Grow(dst, g.features.MaxJSONLen()-g.features.SplicedLen()+g.tailLen()), body)
	})
	return err
}

// tailLen bounds the members after features, so that a body of megabytes
// of pixel values is not copied again for its last few hundred bytes.
func (g *GenerateRequest) tailLen() int {
	return bodyTailSlack + len(g.ContentParts) + len(g.ReasoningParserKwargs) + len(g.KVTransferParams) + len(g.ECTransferParams)
}

// appendJSON is AppendJSON with features writing the features member (when
// set by SetFeatures).
func (g *GenerateRequest) appendJSON(dst []byte, features func(dst []byte) []byte) ([]byte, error) {
	w := objectWriter{b: append(dst, '{')}
	w.b = wire.AppendString(w.key("request_id"), g.RequestID)
	w.b = wire.AppendInts(w.key("token_ids"), g.TokenIDs)
	w.key("token_offsets")
	if g.TokenOffsets == nil {
		w.b = append(w.b, "null"...)
	} else {
		w.b = append(w.b, '[')
		for i, o := range g.TokenOffsets {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = append(w.b, '[')
			w.b = strconv.AppendInt(w.b, int64(o[0]), 10)
			w.b = append(w.b, ',')
			w.b = strconv.AppendInt(w.b, int64(o[1]), 10)
			w.b = append(w.b, ']')
		}
		w.b = append(w.b, ']')
	}
	if g.features != nil {
		w.b = features(w.key("features"))
	} else {
		w.raw(wire.AppendRaw(w.key("features"), g.Features))
	}
	w.raw(wire.AppendRaw(w.key("content_parts"), g.ContentParts))
	w.raw(g.SamplingParams.AppendJSON(w.key("sampling_params")))
	w.optString("model", g.Model)
	w.optBool("reasoning_ended", g.ReasoningEnded)
	w.raw(wire.AppendRaw(w.key("reasoning_parser_kwargs"), g.ReasoningParserKwargs))
	w.optBool("return_token_ids", g.ReturnTokenIDs)
	w.b = wire.AppendString(w.key("output_mode"), g.OutputMode)
	w.optBool("stream", g.Stream)
	w.key("stream_options")
	if g.StreamOptions == nil {
		w.b = append(w.b, "null"...)
	} else {
		so := objectWriter{b: append(w.b, '{')}
		so.optBool("include_usage", g.StreamOptions.IncludeUsage)
		so.optBool("continuous_usage_stats", g.StreamOptions.ContinuousUsageStats)
		w.b = append(so.b, '}')
	}
	w.optString("cache_salt", g.CacheSalt)
	w.b = strconv.AppendInt(w.key("priority"), g.Priority, 10)
	w.raw(wire.AppendRaw(w.key("kv_transfer_params"), g.KVTransferParams))
	w.raw(wire.AppendRaw(w.key("ec_transfer_params"), g.ECTransferParams))
	return append(w.b, '}'), w.err
}

// MarshalJSON is AppendJSON into a new buffer.
func (g GenerateRequest) MarshalJSON() ([]byte, error) { return g.AppendJSON(nil) }

// GenerateRequests is the body of POST /v1/completions/render: one
// GenerateRequest per prompt.
type GenerateRequests []GenerateRequest

// AppendJSON appends the list; nil is an empty list.
func (gs GenerateRequests) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, '[')
	for i := range gs {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = gs[i].AppendJSON(dst); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

// StreamOptions is the OpenAI stream_options object (vLLM's StreamOptions;
// both default to false).
type StreamOptions struct {
	IncludeUsage         *bool `json:"include_usage"`
	ContinuousUsageStats *bool `json:"continuous_usage_stats"`
}
