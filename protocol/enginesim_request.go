package protocol

import (
	"encoding/json"
	"math/big"
	"strconv"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
)

// The engine side of /inference/v1/generate: decoding a GenerateRequest the
// way vLLM's tokens-only server validates it (GenerateRequest is a plain
// pydantic model, so unknown members are ignored; its sampling_params is a
// msgspec SamplingParams validated through pydantic, whose __post_init__
// errors surface as a value_error on the whole sampling_params member).

// generateMaxN is VLLM_MAX_N_SEQUENCES' default, SamplingParams' own n cap;
// the server's max_num_seqs check comes later and is usually lower.
const generateMaxN = 16384

// GenerateRequestInfo is what decoding learns beyond the request itself.
type GenerateRequestInfo struct {
	// MaxTokensSet reports whether sampling_params carried a max_tokens
	// key: vLLM applies its server-side default (the room left in the
	// context) only when it did not, so an explicit 16 stays 16.
	MaxTokensSet bool
}

// DecodeGenerateRequest decodes and validates a generate request body.
// Errors are *ValidationError, reading as vLLM's 400 "Bad Request" body.
// The sampling parameters come back finalised (SamplingParams.__post_init__
// applied); an absent request_id is a fresh UUID, as vLLM's default factory
// makes one. The request never aliases data.
func DecodeGenerateRequest(data []byte) (*GenerateRequest, GenerateRequestInfo, error) {
	obj, fe := decodeBody(data, "GenerateRequest")
	return decodeGenerate(obj, fe)
}

// DecodeGenerateRequestTree is DecodeGenerateRequest for the tree
// ParseJSONTree decoded from body (nil: an empty body), without copying the
// body and scanning it again: engine-sim has the tree already, and a
// request carrying pictures is megabytes. The request aliases body.
func DecodeGenerateRequestTree(body []byte, root *wire.Node) (*GenerateRequest, GenerateRequestInfo, error) {
	obj, fe := decodeTree(root, body, "GenerateRequest")
	return decodeGenerate(obj, fe)
}

func decodeGenerate(obj *object, fe *pylax.FieldError) (*GenerateRequest, GenerateRequestInfo, error) {
	var info GenerateRequestInfo
	if fe != nil {
		return nil, info, &pylax.ValidationError{Errors: []pylax.FieldError{*fe}}
	}
	// validate_cache_salt is a "before" model validator: it runs first and
	// alone.
	if fe := checkCacheSalt(obj); fe != nil {
		return nil, info, &pylax.ValidationError{Errors: []pylax.FieldError{*fe}}
	}
	r := &GenerateRequest{}
	if raw, ok := obj.Member("request_id"); ok {
		s, isStr := pylax.LaxString(raw)
		if !isStr {
			obj.Fail(obj.At("request_id"), "string_type", "Input should be a valid string", raw)
		}
		r.RequestID = s
	} else {
		r.RequestID = RandomUUID()
	}
	r.TokenIDs = obj.generateTokenIDs("token_ids")
	r.TokenOffsets = obj.tokenOffsets("token_offsets")
	r.Features = obj.OptionalDict("features")
	if items, ok := obj.List("content_parts", false); ok {
		for i, item := range items {
			if pylax.Kind(item) != '{' {
				obj.Fail(obj.At("content_parts", i), "dict_type", "Input should be a valid dictionary", item)
			}
		}
		r.ContentParts = obj.raw("content_parts")
	}
	sp, set := obj.generateSamplingParams("sampling_params")
	info.MaxTokensSet = set
	r.Model = obj.OptionalString("model")
	r.ReasoningEnded = obj.OptionalNullableBool("reasoning_ended")
	r.ReasoningParserKwargs = obj.reasoningParserKwargs("reasoning_parser_kwargs")
	r.ReturnTokenIDs = obj.OptionalNullableBool("return_token_ids")
	r.OutputMode = OutputModeTokens
	if raw, ok := obj.Member("output_mode"); ok {
		if s, isStr := pylax.LaxString(raw); isStr && (s == "tokens" || s == "text") {
			r.OutputMode = s
		} else {
			obj.Fail(obj.At("output_mode"), "literal_error", "Input should be 'tokens' or 'text'", raw,
				pylax.CtxEntry{Key: "expected", Value: "'tokens' or 'text'"})
		}
	}
	r.Stream = obj.OptionalBool("stream", false)
	r.StreamOptions = obj.streamOptions("stream_options")
	r.CacheSalt = obj.OptionalString("cache_salt")
	if r.CacheSalt != nil && len([]rune(*r.CacheSalt)) > 1024 {
		obj.Fail(obj.At("cache_salt"), "string_too_long", "String should have at most 1024 characters",
			obj.raw("cache_salt"), pylax.CtxEntry{Key: "max_length", Value: 1024})
	}
	r.Priority = obj.Int64("priority", 0)
	r.KVTransferParams = obj.OptionalDict("kv_transfer_params")
	r.ECTransferParams = obj.OptionalDict("ec_transfer_params")
	if len(obj.Errs) > 0 {
		return nil, info, &pylax.ValidationError{Errors: obj.Errs}
	}
	r.SamplingParams = *sp

	// The "after" model validators, in declaration order.
	after := func(msg string) error {
		return &pylax.ValidationError{Errors: []pylax.FieldError{{
			Type: "value_error", Msg: "Value error, " + msg, Input: obj.Raw,
			Ctx: []pylax.CtxEntry{{Key: "error", Value: pylax.PyException{Class: "ValueError", Message: msg}}},
		}}}
	}
	if len(r.ContentParts) > 0 && !pylax.IsNull(r.ContentParts) && string(r.ContentParts) != "[]" &&
		r.Features != nil && string(r.Features) != "{}" {
		return nil, info, after("content_parts and features are mutually exclusive")
	}
	if r.OutputMode != OutputModeTokens && !r.SamplingParams.Detokenize {
		return nil, info, after("output_mode=" + pylax.StrRepr(r.OutputMode) + " requires sampling_params.detokenize to be true")
	}
	return r, info, nil
}

// generateTokenIDs is GenerateRequest.token_ids: list[int] with
// min_length=1 and a validator refusing negative values.
func (o *object) generateTokenIDs(name string) []int {
	raw, ok := o.Member(name)
	if !ok {
		o.Missing(name)
		return nil
	}
	ids, fast := pylax.FastTokenIDs(raw)
	if !fast {
		items, ok := o.List(name, true)
		if !ok {
			return nil
		}
		ids = make([]int, 0, len(items))
		valid := true
		for i, item := range items {
			n, ok := o.CheckedInt(o.At(name, i), item, nil, nil)
			if !ok {
				valid = false
				continue
			}
			ids = append(ids, pylax.ClampInt(n))
		}
		if !valid {
			return nil
		}
	}
	if len(ids) == 0 {
		o.Fail(o.At(name), "too_short", "List should have at least 1 item after validation, not 0", raw,
			pylax.CtxEntry{Key: "field_type", Value: "List"}, pylax.CtxEntry{Key: "min_length", Value: 1},
			pylax.CtxEntry{Key: "actual_length", Value: 0})
		return nil
	}
	for _, id := range ids {
		if id < 0 {
			msg := "token_ids must not contain negative values"
			o.Fail(o.At(name), "value_error", "Value error, "+msg, raw,
				pylax.CtxEntry{Key: "error", Value: pylax.PyException{Class: "ValueError", Message: msg}})
			return nil
		}
	}
	return ids
}

// tokenOffsets is `token_offsets: list[tuple[int, int]] | None`.
func (o *object) tokenOffsets(name string) [][2]int {
	items, ok := o.ListNodes(name, false)
	if !ok {
		return nil
	}
	out := make([][2]int, 0, len(items))
	for i, item := range items {
		if item.Kind != wire.Array {
			o.Fail(o.At(name, i), "tuple_type", "Input should be a valid tuple", item.Raw)
			continue
		}
		pair := item.Arr
		if len(pair) != 2 {
			o.Fail(o.At(name, i), "too_long", "Tuple should have at most 2 items after validation, not "+strconv.Itoa(len(pair)), item.Raw)
			continue
		}
		var p [2]int
		for j, v := range pair {
			if n, ok := o.CheckedInt(o.At(name, i, j), v.Raw, nil, nil); ok {
				p[j] = pylax.ClampInt(n)
			}
		}
		out = append(out, p)
	}
	return out
}

// reasoningParserKwargs is `ReasoningParserKwargs | None`, a model with
// extra="forbid" holding only chat_template_kwargs.
func (o *object) reasoningParserKwargs(name string) json.RawMessage {
	sub, raw := o.Nested(name, false, "ReasoningParserKwargs")
	if sub == nil {
		return nil
	}
	if v, ok := sub.Member("chat_template_kwargs"); ok && pylax.Kind(v) != '{' {
		sub.Fail(sub.At("chat_template_kwargs"), "dict_type", "Input should be a valid dictionary", v)
	}
	n := o.Node(name)
	for i, key := range n.Keys {
		if key != "chat_template_kwargs" {
			sub.Fail(sub.At(key), "extra_forbidden", "Extra inputs are not permitted", n.Vals[i].Raw)
		}
	}
	o.Errs = append(o.Errs, sub.Errs...)
	return raw
}

// generateSamplingParams is the required sampling_params member. It reports
// whether max_tokens was given. Type errors are reported per field; the
// checks of __post_init__ as one value_error on the member.
func (o *object) generateSamplingParams(name string) (*SamplingParams, bool) {
	raw, ok := o.Member(name)
	if !ok {
		o.Missing(name)
		return nil, false
	}
	if pylax.Kind(raw) != '{' {
		o.Fail(o.At(name), "dataclass_type", "Input should be a dictionary or an instance of SamplingParams", raw,
			pylax.CtxEntry{Key: "class_name", Value: "SamplingParams"})
		return nil, false
	}
	s := o.sub(name)
	p := NewSamplingParams()
	p.N = s.Int("n", 1)
	p.PresencePenalty = s.Float("presence_penalty", 0)
	p.FrequencyPenalty = s.Float("frequency_penalty", 0)
	p.RepetitionPenalty = s.Float("repetition_penalty", 1)
	p.Temperature = s.Float("temperature", 1)
	p.TopP = s.Float("top_p", 1)
	p.TopK = s.Int("top_k", 0)
	p.MinP = s.Float("min_p", 0)
	p.Seed = s.OptionalInt64("seed")
	p.Stop = s.StopField("stop")
	p.StopTokenIDs = s.OptionalIntList("stop_token_ids", nil)
	p.IgnoreEOS = s.Bool("ignore_eos", false)
	_, maxSet := s.Member("max_tokens")
	p.MaxTokens = s.OptionalInt("max_tokens", p.MaxTokens, nil, nil)
	p.MinTokens = s.Int("min_tokens", 0)
	p.Logprobs = s.OptionalInt("logprobs", nil, nil, nil)
	p.PromptLogprobs = s.OptionalInt("prompt_logprobs", nil, nil, nil)
	p.LogprobTokenIDs = s.OptionalIntList("logprob_token_ids", nil)
	p.FlatLogprobs = s.Bool("flat_logprobs", false)
	p.Detokenize = s.Bool("detokenize", true)
	p.SkipSpecialTokens = s.Bool("skip_special_tokens", true)
	p.SpacesBetweenSpecialTokens = s.Bool("spaces_between_special_tokens", true)
	p.IncludeStopStrInOutput = s.Bool("include_stop_str_in_output", false)
	if v, ok := s.Member("output_kind"); ok {
		n, good := s.CheckedInt(s.At("output_kind"), v, big.NewInt(0), big.NewInt(2))
		if good {
			p.OutputKind = RequestOutputKind(n.Int64())
		}
	}
	p.SkipClone = s.Bool("skip_clone", false)
	p.OutputTextBufferLength = s.Int("output_text_buffer_length", 0)
	p.StructuredOutputs = s.structuredOutputs("structured_outputs")
	if entries := s.logitBias("logit_bias"); entries != nil {
		p.LogitBias = make([]LogitBias, 0, len(entries))
		for _, e := range entries {
			id, err := strconv.ParseInt(e.Key, 10, 64)
			if err != nil {
				s.Fail(s.At("logit_bias", e.Key, "[key]"), "int_parsing",
					"Input should be a valid integer, unable to parse string as an integer", json.RawMessage(strconv.Quote(e.Key)))
				continue
			}
			p.LogitBias = append(p.LogitBias, LogitBias{TokenID: id, Bias: e.Bias})
		}
	}
	p.AllowedTokenIDs = s.OptionalIntList("allowed_token_ids", nil)
	p.ExtraArgs = s.OptionalDict("extra_args")
	p.RoutedExpertsPromptStart = s.Int("routed_experts_prompt_start", 0)
	if bw, ok := s.Member("bad_words"); ok && !pylax.IsNull(bw) {
		p.BadWords = s.StringList("bad_words", nil)
	}
	if _, ok := s.Member("skip_reading_prefix_cache"); ok {
		p.SkipReadingPrefixCache = s.OptionalBool("skip_reading_prefix_cache", false)
	}
	p.ThinkingTokenBudget = s.OptionalInt("thinking_token_budget", nil, nil, nil)
	p.RepetitionDetection = s.OptionalDict("repetition_detection")
	if len(s.Errs) > 0 {
		o.Errs = append(o.Errs, s.Errs...)
		return nil, maxSet
	}
	if err := p.Finalize(generateMaxN); err != nil {
		ex := pylax.PyException{Class: "ValueError", Message: err.Error()}
		if spe, ok := err.(*SamplingParamsError); ok {
			ex.Message = spe.Msg
			if spe.Parameter != nil {
				ex.Class, ex.Parameter = "VLLMValidationError", spe.Parameter
			}
		}
		o.Fail(o.At(name), "value_error", "Value error, "+err.Error(), raw, pylax.CtxEntry{Key: "error", Value: ex})
		return nil, maxSet
	}
	return &p, maxSet
}
