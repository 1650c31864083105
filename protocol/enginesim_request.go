package protocol

import (
	"encoding/json"
	"math/big"
	"strconv"
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
// makes one.
func DecodeGenerateRequest(data []byte) (*GenerateRequest, GenerateRequestInfo, error) {
	var info GenerateRequestInfo
	obj, fe := decodeBody(data, "GenerateRequest")
	if fe != nil {
		return nil, info, &ValidationError{Errors: []FieldError{*fe}}
	}
	// validate_cache_salt is a "before" model validator: it runs first and
	// alone.
	if fe := checkCacheSalt(obj); fe != nil {
		return nil, info, &ValidationError{Errors: []FieldError{*fe}}
	}
	r := &GenerateRequest{}
	if raw, ok := obj.members["request_id"]; ok {
		s, isStr := laxString(raw)
		if !isStr {
			obj.fail(obj.at("request_id"), "string_type", "Input should be a valid string", raw)
		}
		r.RequestID = s
	} else {
		r.RequestID = RandomUUID()
	}
	r.TokenIDs = obj.generateTokenIDs("token_ids")
	r.TokenOffsets = obj.tokenOffsets("token_offsets")
	r.Features = obj.optionalDict("features")
	if items, ok := obj.list("content_parts", false); ok {
		for i, item := range items {
			if jsonKind(item) != '{' {
				obj.fail(obj.at("content_parts", i), "dict_type", "Input should be a valid dictionary", item)
			}
		}
		r.ContentParts = obj.members["content_parts"]
	}
	sp, set := obj.generateSamplingParams("sampling_params")
	info.MaxTokensSet = set
	r.Model = obj.optionalString("model")
	r.ReasoningEnded = obj.optionalNullableBool("reasoning_ended")
	r.ReasoningParserKwargs = obj.reasoningParserKwargs("reasoning_parser_kwargs")
	r.ReturnTokenIDs = obj.optionalNullableBool("return_token_ids")
	r.OutputMode = OutputModeTokens
	if raw, ok := obj.members["output_mode"]; ok {
		if s, isStr := laxString(raw); isStr && (s == "tokens" || s == "text") {
			r.OutputMode = s
		} else {
			obj.fail(obj.at("output_mode"), "literal_error", "Input should be 'tokens' or 'text'", raw,
				CtxEntry{Key: "expected", Value: "'tokens' or 'text'"})
		}
	}
	r.Stream = obj.optionalBool("stream", false)
	r.StreamOptions = obj.streamOptions("stream_options")
	r.CacheSalt = obj.optionalString("cache_salt")
	if r.CacheSalt != nil && len([]rune(*r.CacheSalt)) > 1024 {
		obj.fail(obj.at("cache_salt"), "string_too_long", "String should have at most 1024 characters",
			obj.members["cache_salt"], CtxEntry{Key: "max_length", Value: 1024})
	}
	r.Priority = obj.int64Field("priority", 0)
	r.KVTransferParams = obj.optionalDict("kv_transfer_params")
	r.ECTransferParams = obj.optionalDict("ec_transfer_params")
	if len(obj.errs) > 0 {
		return nil, info, &ValidationError{Errors: obj.errs}
	}
	r.SamplingParams = *sp

	// The "after" model validators, in declaration order.
	after := func(msg string) error {
		return &ValidationError{Errors: []FieldError{{
			Type: "value_error", Msg: "Value error, " + msg, Input: obj.raw,
			Ctx: []CtxEntry{{Key: "error", Value: PyException{Class: "ValueError", Message: msg}}},
		}}}
	}
	if len(r.ContentParts) > 0 && !isNull(r.ContentParts) && string(r.ContentParts) != "[]" &&
		r.Features != nil && string(r.Features) != "{}" {
		return nil, info, after("content_parts and features are mutually exclusive")
	}
	if r.OutputMode != OutputModeTokens && !r.SamplingParams.Detokenize {
		return nil, info, after("output_mode=" + pyStrRepr(r.OutputMode) + " requires sampling_params.detokenize to be true")
	}
	return r, info, nil
}

// generateTokenIDs is GenerateRequest.token_ids: list[int] with
// min_length=1 and a validator refusing negative values.
func (o *object) generateTokenIDs(name string) []int {
	raw, ok := o.members[name]
	if !ok {
		o.missing(name)
		return nil
	}
	ids, fast := fastTokenIDs(raw)
	if !fast {
		items, ok := o.list(name, true)
		if !ok {
			return nil
		}
		ids = make([]int, 0, len(items))
		valid := true
		for i, item := range items {
			n, ok := o.checkedInt(o.at(name, i), item, nil, nil)
			if !ok {
				valid = false
				continue
			}
			ids = append(ids, clampInt(n))
		}
		if !valid {
			return nil
		}
	}
	if len(ids) == 0 {
		o.fail(o.at(name), "too_short", "List should have at least 1 item after validation, not 0", raw,
			CtxEntry{Key: "field_type", Value: "List"}, CtxEntry{Key: "min_length", Value: 1},
			CtxEntry{Key: "actual_length", Value: 0})
		return nil
	}
	for _, id := range ids {
		if id < 0 {
			msg := "token_ids must not contain negative values"
			o.fail(o.at(name), "value_error", "Value error, "+msg, raw,
				CtxEntry{Key: "error", Value: PyException{Class: "ValueError", Message: msg}})
			return nil
		}
	}
	return ids
}

// tokenOffsets is `token_offsets: list[tuple[int, int]] | None`.
func (o *object) tokenOffsets(name string) [][2]int {
	items, ok := o.list(name, false)
	if !ok {
		return nil
	}
	out := make([][2]int, 0, len(items))
	for i, item := range items {
		var pair []json.RawMessage
		if jsonKind(item) != '[' || json.Unmarshal(item, &pair) != nil {
			o.fail(o.at(name, i), "tuple_type", "Input should be a valid tuple", item)
			continue
		}
		if len(pair) != 2 {
			o.fail(o.at(name, i), "too_long", "Tuple should have at most 2 items after validation, not "+strconv.Itoa(len(pair)), item)
			continue
		}
		var p [2]int
		for j, v := range pair {
			if n, ok := o.checkedInt(o.at(name, i, j), v, nil, nil); ok {
				p[j] = clampInt(n)
			}
		}
		out = append(out, p)
	}
	return out
}

// reasoningParserKwargs is `ReasoningParserKwargs | None`, a model with
// extra="forbid" holding only chat_template_kwargs.
func (o *object) reasoningParserKwargs(name string) json.RawMessage {
	sub, raw := o.nested(name, false, "ReasoningParserKwargs")
	if sub == nil {
		return nil
	}
	if v, ok := sub.members["chat_template_kwargs"]; ok && jsonKind(v) != '{' {
		sub.fail(sub.at("chat_template_kwargs"), "dict_type", "Input should be a valid dictionary", v)
	}
	for _, key := range keysInOrder(raw, sub.members) {
		if key != "chat_template_kwargs" {
			sub.fail(sub.at(key), "extra_forbidden", "Extra inputs are not permitted", sub.members[key])
		}
	}
	o.errs = append(o.errs, sub.errs...)
	return raw
}

// generateSamplingParams is the required sampling_params member. It reports
// whether max_tokens was given. Type errors are reported per field; the
// checks of __post_init__ as one value_error on the member.
func (o *object) generateSamplingParams(name string) (*SamplingParams, bool) {
	raw, ok := o.members[name]
	if !ok {
		o.missing(name)
		return nil, false
	}
	if jsonKind(raw) != '{' {
		o.fail(o.at(name), "dataclass_type", "Input should be a dictionary or an instance of SamplingParams", raw,
			CtxEntry{Key: "class_name", Value: "SamplingParams"})
		return nil, false
	}
	var members map[string]json.RawMessage
	_ = json.Unmarshal(raw, &members)
	s := &object{raw: raw, members: members, loc: o.at(name)}
	p := NewSamplingParams()
	p.N = s.integer("n", 1)
	p.PresencePenalty = s.float("presence_penalty", 0)
	p.FrequencyPenalty = s.float("frequency_penalty", 0)
	p.RepetitionPenalty = s.float("repetition_penalty", 1)
	p.Temperature = s.float("temperature", 1)
	p.TopP = s.float("top_p", 1)
	p.TopK = s.integer("top_k", 0)
	p.MinP = s.float("min_p", 0)
	p.Seed = s.optionalInt64("seed")
	p.Stop = s.stopField("stop")
	p.StopTokenIDs = s.optionalIntList("stop_token_ids", nil)
	p.IgnoreEOS = s.boolean("ignore_eos", false)
	_, maxSet := members["max_tokens"]
	p.MaxTokens = s.optionalInt("max_tokens", p.MaxTokens, nil, nil)
	p.MinTokens = s.integer("min_tokens", 0)
	p.Logprobs = s.optionalInt("logprobs", nil, nil, nil)
	p.PromptLogprobs = s.optionalInt("prompt_logprobs", nil, nil, nil)
	p.LogprobTokenIDs = s.optionalIntList("logprob_token_ids", nil)
	p.FlatLogprobs = s.boolean("flat_logprobs", false)
	p.Detokenize = s.boolean("detokenize", true)
	p.SkipSpecialTokens = s.boolean("skip_special_tokens", true)
	p.SpacesBetweenSpecialTokens = s.boolean("spaces_between_special_tokens", true)
	p.IncludeStopStrInOutput = s.boolean("include_stop_str_in_output", false)
	if v, ok := members["output_kind"]; ok {
		n, good := s.checkedInt(s.at("output_kind"), v, big.NewInt(0), big.NewInt(2))
		if good {
			p.OutputKind = RequestOutputKind(n.Int64())
		}
	}
	p.SkipClone = s.boolean("skip_clone", false)
	p.OutputTextBufferLength = s.integer("output_text_buffer_length", 0)
	p.StructuredOutputs = s.structuredOutputs("structured_outputs")
	if entries := s.logitBias("logit_bias"); entries != nil {
		p.LogitBias = make([]LogitBias, 0, len(entries))
		for _, e := range entries {
			id, err := strconv.ParseInt(e.Key, 10, 64)
			if err != nil {
				s.fail(s.at("logit_bias", e.Key, "[key]"), "int_parsing",
					"Input should be a valid integer, unable to parse string as an integer", json.RawMessage(strconv.Quote(e.Key)))
				continue
			}
			p.LogitBias = append(p.LogitBias, LogitBias{TokenID: id, Bias: e.Bias})
		}
	}
	p.AllowedTokenIDs = s.optionalIntList("allowed_token_ids", nil)
	p.ExtraArgs = s.optionalDict("extra_args")
	p.RoutedExpertsPromptStart = s.integer("routed_experts_prompt_start", 0)
	if _, ok := members["bad_words"]; ok && !isNull(members["bad_words"]) {
		p.BadWords = s.stringList("bad_words", nil)
	}
	if _, ok := members["skip_reading_prefix_cache"]; ok {
		p.SkipReadingPrefixCache = s.optionalBool("skip_reading_prefix_cache", false)
	}
	p.ThinkingTokenBudget = s.optionalInt("thinking_token_budget", nil, nil, nil)
	p.RepetitionDetection = s.optionalDict("repetition_detection")
	if len(s.errs) > 0 {
		o.errs = append(o.errs, s.errs...)
		return nil, maxSet
	}
	if err := p.Finalize(generateMaxN); err != nil {
		ex := PyException{Class: "ValueError", Message: err.Error()}
		if spe, ok := err.(*SamplingParamsError); ok {
			ex.Message = spe.Msg
			if spe.Parameter != nil {
				ex.Class, ex.Parameter = "VLLMValidationError", spe.Parameter
			}
		}
		o.fail(o.at(name), "value_error", "Value error, "+err.Error(), raw, CtxEntry{Key: "error", Value: ex})
		return nil, maxSet
	}
	return &p, maxSet
}
