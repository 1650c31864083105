package protocol

import (
	"encoding/json"
	"fmt"
	"math/big"
)

// Prompt is one prompt of a completion request: text, or token IDs.
type Prompt struct {
	Text     *string
	TokenIDs []int
}

// CompletionRequest is vLLM's CompletionRequest (the body of
// /v1/completions and /v1/completions/render) as far as the render tier
// reads it. Field defaults are vLLM's; a nil pointer is Python's None.
type CompletionRequest struct {
	Model *string
	// Prompts is the prompt field as a list: a string or a list of token
	// IDs is one prompt, a list of strings or of ID lists one per item.
	Prompts []Prompt
	// HasPromptEmbeds is set when prompt_embeds is present and not null:
	// vrender has no --enable-prompt-embeds, so render refuses the request.
	HasPromptEmbeds  bool
	Echo             *bool // default false
	FrequencyPenalty *float64
	LogitBias        []LogitBiasEntry
	Logprobs         *int
	MaxTokens        *int // default 16; null means 16
	N                int  // default 1
	PresencePenalty  *float64
	Seed             *int64
	Stop             []string
	Stream           *bool
	StreamOptions    *StreamOptions
	Suffix           *string
	Temperature      *float64
	TopP             *float64
	User             *string

	UseBeamSearch          bool
	TopK                   *int
	MinP                   *float64
	RepetitionPenalty      *float64
	LengthPenalty          float64
	StopTokenIDs           []int
	IncludeStopStrInOutput bool
	IgnoreEOS              bool
	MinTokens              int
	SkipSpecialTokens      bool
	SpacesBetweenSpecial   bool
	TruncatePromptTokens   *int
	TruncationSide         *string
	AllowedTokenIDs        []int
	PromptLogprobs         *int
	LogprobTokenIDs        []int
	BadWords               []string

	AddSpecialTokens       bool // default true
	ResponseFormat         json.RawMessage
	StructuredOutputs      *StructuredOutputsParams
	Priority               int64
	RequestID              *string
	ReturnTokensAsTokenIDs *bool
	ReturnTokenIDs         *bool
	ReturnTokenOffsets     *bool
	CacheSalt              *string
	KVTransferParams       json.RawMessage
	ECTransferParams       json.RawMessage
	VLLMXargs              json.RawMessage
	RepetitionDetection    json.RawMessage
	ThinkingTokenBudget    *int
}

// maxCompletionPrompts is VLLM_MAX_COMPLETION_PROMPTS' default.
const maxCompletionPrompts = 1024

// UnmarshalJSON decodes and validates data; see DecodeCompletionRequest.
func (r *CompletionRequest) UnmarshalJSON(data []byte) error {
	v, err := DecodeCompletionRequest(data)
	if err != nil {
		return err
	}
	*r = *v
	return nil
}

// DecodeCompletionRequest validates a completion body as vLLM's pydantic
// model does (model validators first, then the fields). Errors are
// *ValidationError. prompt_embeds are not supported by vrender: render
// refuses them as vLLM does without --enable-prompt-embeds.
func DecodeCompletionRequest(data []byte) (*CompletionRequest, error) {
	obj, fe := decodeBody(data, "CompletionRequest")
	if fe != nil {
		return nil, &ValidationError{Errors: []FieldError{*fe}}
	}
	checks := []func(*object) *FieldError{
		checkCacheSalt,
		checkPromptListLength,
		checkPromptPresent,
		checkStreamOptions,
		checkCompletionLogprobs,
		checkStructuredOutputsCount(true),
		checkResponseFormat,
	}
	for _, check := range checks {
		if fe := check(obj); fe != nil {
			return nil, &ValidationError{Errors: []FieldError{*fe}}
		}
	}
	r := &CompletionRequest{}
	r.Model = obj.optionalString("model")
	r.Prompts = obj.prompts("prompt")
	r.Echo = obj.optionalBool("echo", false)
	r.FrequencyPenalty = obj.optionalFloat("frequency_penalty", new(0.0))
	r.LogitBias = obj.logitBias("logit_bias")
	r.Logprobs = obj.optionalInt("logprobs", nil, nil, nil)
	r.MaxTokens = obj.optionalInt("max_tokens", new(16), nil, nil)
	if r.MaxTokens == nil { // normalize_null_max_tokens
		r.MaxTokens = new(16)
	}
	r.N = obj.integer("n", 1)
	r.PresencePenalty = obj.optionalFloat("presence_penalty", new(0.0))
	r.Seed = obj.optionalInt64("seed")
	r.Stop = obj.stopField("stop")
	r.Stream = obj.optionalBool("stream", false)
	r.StreamOptions = obj.streamOptions("stream_options")
	r.Suffix = obj.optionalString("suffix")
	if pe, ok := obj.members["prompt_embeds"]; ok && !isNull(pe) {
		r.HasPromptEmbeds = true
	}
	r.Temperature = obj.optionalFloat("temperature", nil)
	r.TopP = obj.optionalFloat("top_p", nil)
	r.User = obj.optionalString("user")

	r.UseBeamSearch = obj.boolean("use_beam_search", false)
	r.TopK = obj.optionalInt("top_k", nil, nil, nil)
	r.MinP = obj.optionalFloat("min_p", nil)
	r.RepetitionPenalty = obj.optionalFloat("repetition_penalty", nil)
	r.LengthPenalty = obj.float("length_penalty", 1.0)
	r.StopTokenIDs = obj.optionalIntList("stop_token_ids", []int{})
	r.IncludeStopStrInOutput = obj.boolean("include_stop_str_in_output", false)
	r.IgnoreEOS = obj.boolean("ignore_eos", false)
	r.MinTokens = obj.integer("min_tokens", 0)
	r.SkipSpecialTokens = obj.boolean("skip_special_tokens", true)
	r.SpacesBetweenSpecial = obj.boolean("spaces_between_special_tokens", true)
	r.TruncatePromptTokens = obj.optionalInt("truncate_prompt_tokens", nil, new(-1), nil)
	r.TruncationSide = obj.optionalLiteral("truncation_side", "left", "right")
	r.AllowedTokenIDs = obj.optionalIntList("allowed_token_ids", nil)
	r.PromptLogprobs = obj.optionalInt("prompt_logprobs", nil, nil, nil)
	r.LogprobTokenIDs = obj.optionalIntList("logprob_token_ids", nil)
	r.BadWords = obj.stringList("bad_words", []string{})

	r.AddSpecialTokens = obj.boolean("add_special_tokens", true)
	r.ResponseFormat = obj.responseFormat("response_format")
	r.StructuredOutputs = obj.structuredOutputs("structured_outputs")
	r.Priority = obj.int64Field("priority", 0)
	r.RequestID = obj.optionalString("request_id")
	r.ReturnTokensAsTokenIDs = obj.optionalNullableBool("return_tokens_as_token_ids")
	r.ReturnTokenIDs = obj.optionalNullableBool("return_token_ids")
	r.ReturnTokenOffsets = obj.optionalBool("return_token_offsets", false)
	r.CacheSalt = obj.optionalString("cache_salt")
	r.KVTransferParams = obj.optionalDict("kv_transfer_params")
	r.ECTransferParams = obj.optionalDict("ec_transfer_params")
	r.VLLMXargs = obj.vllmXargs("vllm_xargs")
	r.RepetitionDetection = obj.repetitionDetection("repetition_detection")
	r.ThinkingTokenBudget = obj.thinkingTokenBudget("thinking_token_budget")
	if len(obj.errs) > 0 {
		return nil, &ValidationError{Errors: obj.errs}
	}
	return r, nil
}

func checkPromptPresent(obj *object) *FieldError {
	raw, ok := obj.members["prompt"]
	empty := !ok || isNull(raw)
	if s, isStr := laxString(raw); isStr && s == "" {
		empty = true
	}
	if empty {
		// prompt_embeds are not supported, so only a prompt can satisfy this.
		if pe, ok := obj.members["prompt_embeds"]; ok && !isNull(pe) && pyTruthy(pe) {
			return nil
		}
		return validatorError(obj, "VLLMValidationError",
			"Either prompt or prompt_embeds must be provided and non-empty.", "prompt", "")
	}
	return nil
}

func checkPromptListLength(obj *object) *FieldError {
	raw := obj.members["prompt"]
	if jsonKind(raw) != '[' {
		return nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil || len(items) <= maxCompletionPrompts {
		return nil
	}
	allInts := true
	for _, it := range items {
		if k := jsonKind(it); k != '-' && !isDigit(k) {
			allInts = false
			break
		}
	}
	if allInts {
		return nil
	}
	return validatorError(obj, "VLLMValidationError", fmt.Sprintf("prompt list length %d exceeds the maximum allowed count of %d. "+
		"To increase this limit, set the VLLM_MAX_COMPLETION_PROMPTS environment variable.", len(items), maxCompletionPrompts), "prompt", "")
}

func checkCompletionLogprobs(obj *object) *FieldError {
	m := obj.members
	if pyTruthy(m["logprob_token_ids"]) && pyTruthy(m["use_beam_search"]) {
		return validatorError(obj, "VLLMValidationError", "`logprob_token_ids` is not supported with beam search.", "logprob_token_ids", "")
	}
	if pyTruthy(m["logprob_token_ids"]) && pyTruthy(m["echo"]) {
		if v, ok := rawNumber(m["max_tokens"]); ok && v == 0 {
			return validatorError(obj, "VLLMValidationError", "`logprob_token_ids` is not supported when `echo=True` and "+
				"`max_tokens=0` because no output tokens are generated.", "logprob_token_ids", "")
		}
	}
	if lp, ok := m["logprobs"]; pyTruthy(m["logprob_token_ids"]) && (!ok || isNull(lp)) {
		return validatorError(obj, "VLLMValidationError", "when using `logprob_token_ids`, `logprobs` must be set.", "logprob_token_ids", "")
	}
	if fe := checkPromptLogprobs(obj); fe != nil {
		return fe
	}
	if v, ok := rawNumber(m["logprobs"]); ok && v < 0 {
		return validatorError(obj, "VLLMValidationError", "`logprobs` must be a positive value.", "logprobs", pyNumberStr(string(m["logprobs"])))
	}
	return nil
}

// prompts decodes `prompt: list[int>=0] | list[list[int>=0]] | str |
// list[str] | None` with pydantic's smart union: the first member that
// matches strictly wins, else the first that matches in lax mode; when none
// matches, every member's errors are reported in member order.
func (o *object) prompts(name string) []Prompt {
	raw, ok := o.members[name]
	if !ok || isNull(raw) {
		return nil
	}
	if s, ok := laxString(raw); ok {
		return []Prompt{{Text: &s}}
	}
	var items []json.RawMessage
	if jsonKind(raw) == '[' {
		_ = json.Unmarshal(raw, &items)
	}
	isList := jsonKind(raw) == '['
	for _, strict := range []bool{true, false} {
		if !isList {
			break
		}
		if ids, errs := promptIDs(o.at(name), items, strict); errs == nil {
			return []Prompt{{TokenIDs: ids}}
		}
		if lists, errs := promptIDLists(o.at(name), items, strict); errs == nil {
			out := make([]Prompt, len(lists))
			for i, ids := range lists {
				out[i] = Prompt{TokenIDs: ids}
			}
			return out
		}
		if texts, errs := promptTexts(o.at(name), items); errs == nil {
			out := make([]Prompt, len(texts))
			for i := range texts {
				out[i] = Prompt{Text: &texts[i]}
			}
			return out
		}
	}
	listErr := FieldError{Type: "list_type", Loc: o.at(name), Msg: "Input should be a valid list", Input: raw}
	if !isList {
		o.errs = append(o.errs, listErr, listErr,
			FieldError{Type: "string_type", Loc: o.at(name), Msg: "Input should be a valid string", Input: raw}, listErr)
		return nil
	}
	_, e1 := promptIDs(o.at(name), items, false)
	_, e2 := promptIDLists(o.at(name), items, false)
	_, e4 := promptTexts(o.at(name), items)
	o.errs = append(o.errs, e1...)
	o.errs = append(o.errs, e2...)
	o.errs = append(o.errs, FieldError{Type: "string_type", Loc: o.at(name), Msg: "Input should be a valid string", Input: raw})
	o.errs = append(o.errs, e4...)
	return nil
}

var bigZero = big.NewInt(0)

// promptIDs validates items as list[int>=0]. Strict mode takes only JSON
// integers.
func promptIDs(loc []any, items []json.RawMessage, strict bool) ([]int, []FieldError) {
	sub := &object{}
	ids := make([]int, 0, len(items))
	for i, it := range items {
		at := append(append([]any{}, loc...), i)
		if strict && !isPlainInt(it) {
			sub.fail(at, "int_type", "Input should be a valid integer", it)
			continue
		}
		n, ok := sub.checkedInt(at, it, bigZero, nil)
		if ok {
			ids = append(ids, clampInt(n))
		}
	}
	return ids, sub.errs
}

func promptIDLists(loc []any, items []json.RawMessage, strict bool) ([][]int, []FieldError) {
	var errs []FieldError
	lists := make([][]int, 0, len(items))
	for i, it := range items {
		at := append(append([]any{}, loc...), i)
		if jsonKind(it) != '[' {
			errs = append(errs, FieldError{Type: "list_type", Loc: at, Msg: "Input should be a valid list", Input: it})
			continue
		}
		var inner []json.RawMessage
		_ = json.Unmarshal(it, &inner)
		ids, e := promptIDs(at, inner, strict)
		errs = append(errs, e...)
		lists = append(lists, ids)
	}
	return lists, errs
}

func promptTexts(loc []any, items []json.RawMessage) ([]string, []FieldError) {
	var errs []FieldError
	texts := make([]string, 0, len(items))
	for i, it := range items {
		s, ok := laxString(it)
		if !ok {
			at := append(append([]any{}, loc...), i)
			errs = append(errs, FieldError{Type: "string_type", Loc: at, Msg: "Input should be a valid string", Input: it})
			continue
		}
		texts = append(texts, s)
	}
	return texts, errs
}

// isPlainInt reports whether raw is a JSON integer literal (what strict
// int validation accepts from JSON).
func isPlainInt(raw json.RawMessage) bool {
	k := jsonKind(raw)
	if k != '-' && !isDigit(k) {
		return false
	}
	for _, c := range raw {
		if c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	return true
}
