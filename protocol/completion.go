package protocol

import (
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
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

	AddSpecialTokens       bool       // default true
	ResponseFormat         *wire.Node // an object; nil when absent or null
	StructuredOutputs      *StructuredOutputsParams
	Priority               int64
	RequestID              *string
	ReturnTokensAsTokenIDs *bool
	ReturnTokenIDs         *bool
	ReturnTokenOffsets     *bool
	CacheSalt              *string
	KVTransferParams       *wire.Node // objects; nil when absent, null or invalid
	ECTransferParams       *wire.Node
	VLLMXargs              *wire.Node // an object; nil when absent, null or invalid
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
		return nil, &pylax.ValidationError{Errors: []pylax.FieldError{*fe}}
	}
	checks := []func(*object) *pylax.FieldError{
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
			return nil, &pylax.ValidationError{Errors: []pylax.FieldError{*fe}}
		}
	}
	r := &CompletionRequest{}
	r.Model = obj.OptionalString("model")
	r.Prompts = obj.prompts("prompt")
	r.Echo = obj.OptionalBool("echo", false)
	r.FrequencyPenalty = obj.OptionalFloat("frequency_penalty", new(0.0))
	r.LogitBias = obj.logitBias("logit_bias")
	r.Logprobs = obj.OptionalInt("logprobs", nil, nil, nil)
	r.MaxTokens = obj.OptionalInt("max_tokens", new(16), nil, nil)
	if r.MaxTokens == nil { // normalize_null_max_tokens
		r.MaxTokens = new(16)
	}
	r.N = obj.Int("n", 1)
	r.PresencePenalty = obj.OptionalFloat("presence_penalty", new(0.0))
	r.Seed = obj.OptionalInt64("seed")
	r.Stop = obj.StopField("stop")
	r.Stream = obj.OptionalBool("stream", false)
	r.StreamOptions = obj.streamOptions("stream_options")
	r.Suffix = obj.OptionalString("suffix")
	if pe, ok := obj.Member("prompt_embeds"); ok && !pylax.IsNull(pe) {
		r.HasPromptEmbeds = true
	}
	r.Temperature = obj.OptionalFloat("temperature", nil)
	r.TopP = obj.OptionalFloat("top_p", nil)
	r.User = obj.OptionalString("user")

	r.UseBeamSearch = obj.Bool("use_beam_search", false)
	r.TopK = obj.OptionalInt("top_k", nil, nil, nil)
	r.MinP = obj.OptionalFloat("min_p", nil)
	r.RepetitionPenalty = obj.OptionalFloat("repetition_penalty", nil)
	r.LengthPenalty = obj.Float("length_penalty", 1.0)
	r.StopTokenIDs = obj.OptionalIntList("stop_token_ids", []int{})
	r.IncludeStopStrInOutput = obj.Bool("include_stop_str_in_output", false)
	r.IgnoreEOS = obj.Bool("ignore_eos", false)
	r.MinTokens = obj.Int("min_tokens", 0)
	r.SkipSpecialTokens = obj.Bool("skip_special_tokens", true)
	r.SpacesBetweenSpecial = obj.Bool("spaces_between_special_tokens", true)
	r.TruncatePromptTokens = obj.OptionalInt("truncate_prompt_tokens", nil, new(-1), nil)
	r.TruncationSide = obj.OptionalLiteral("truncation_side", "left", "right")
	r.AllowedTokenIDs = obj.OptionalIntList("allowed_token_ids", nil)
	r.PromptLogprobs = obj.OptionalInt("prompt_logprobs", nil, nil, nil)
	r.LogprobTokenIDs = obj.OptionalIntList("logprob_token_ids", nil)
	r.BadWords = obj.StringList("bad_words", []string{})

	r.AddSpecialTokens = obj.Bool("add_special_tokens", true)
	r.ResponseFormat = obj.responseFormat("response_format")
	r.StructuredOutputs = obj.structuredOutputs("structured_outputs")
	r.Priority = obj.Int64("priority", 0)
	r.RequestID = obj.OptionalString("request_id")
	r.ReturnTokensAsTokenIDs = obj.OptionalNullableBool("return_tokens_as_token_ids")
	r.ReturnTokenIDs = obj.OptionalNullableBool("return_token_ids")
	r.ReturnTokenOffsets = obj.OptionalBool("return_token_offsets", false)
	r.CacheSalt = obj.OptionalString("cache_salt")
	r.KVTransferParams = obj.OptionalDictNode("kv_transfer_params")
	r.ECTransferParams = obj.OptionalDictNode("ec_transfer_params")
	r.VLLMXargs = obj.vllmXargs("vllm_xargs")
	r.RepetitionDetection = obj.repetitionDetection("repetition_detection")
	r.ThinkingTokenBudget = obj.thinkingTokenBudget("thinking_token_budget")
	if len(obj.Errs) > 0 {
		return nil, &pylax.ValidationError{Errors: obj.Errs}
	}
	return r, nil
}

func checkPromptPresent(obj *object) *pylax.FieldError {
	raw, ok := obj.Member("prompt")
	empty := !ok || pylax.IsNull(raw)
	if s, isStr := pylax.LaxString(raw); isStr && s == "" {
		empty = true
	}
	if empty {
		// prompt_embeds are not supported, so only a prompt can satisfy this.
		if pe, ok := obj.Member("prompt_embeds"); ok && !pylax.IsNull(pe) && pylax.Truthy(pe) {
			return nil
		}
		return obj.ValidatorError("VLLMValidationError",
			"Either prompt or prompt_embeds must be provided and non-empty.", "prompt", "")
	}
	return nil
}

func checkPromptListLength(obj *object) *pylax.FieldError {
	prompt := obj.Node("prompt")
	if prompt == nil || prompt.Kind != wire.Array || len(prompt.Arr) <= maxCompletionPrompts {
		return nil
	}
	items := prompt.Arr
	allInts := true
	for _, it := range items {
		if k := pylax.Kind(it.Raw); k != '-' && !pylax.IsDigit(k) { // NaN and Infinity are not ints
			allInts = false
			break
		}
	}
	if allInts {
		return nil
	}
	return obj.ValidatorError("VLLMValidationError", fmt.Sprintf("prompt list length %d exceeds the maximum allowed count of %d. "+
		"To increase this limit, set the VLLM_MAX_COMPLETION_PROMPTS environment variable.", len(items), maxCompletionPrompts), "prompt", "")
}

func checkCompletionLogprobs(obj *object) *pylax.FieldError {
	if obj.TruthyMember("logprob_token_ids") && obj.TruthyMember("use_beam_search") {
		return obj.ValidatorError("VLLMValidationError", "`logprob_token_ids` is not supported with beam search.", "logprob_token_ids", "")
	}
	if obj.TruthyMember("logprob_token_ids") && obj.TruthyMember("echo") {
		if v, ok := pylax.RawNumber(obj.raw("max_tokens")); ok && v == 0 {
			return obj.ValidatorError("VLLMValidationError", "`logprob_token_ids` is not supported when `echo=True` and "+
				"`max_tokens=0` because no output tokens are generated.", "logprob_token_ids", "")
		}
	}
	if lp, ok := obj.Member("logprobs"); obj.TruthyMember("logprob_token_ids") && (!ok || pylax.IsNull(lp)) {
		return obj.ValidatorError("VLLMValidationError", "when using `logprob_token_ids`, `logprobs` must be set.", "logprob_token_ids", "")
	}
	if fe := checkPromptLogprobs(obj); fe != nil {
		return fe
	}
	if v, ok := pylax.RawNumber(obj.raw("logprobs")); ok && v < 0 {
		return obj.ValidatorError("VLLMValidationError", "`logprobs` must be a positive value.", "logprobs", pylax.NumberStr(string(obj.raw("logprobs"))))
	}
	return nil
}

// prompts decodes `prompt: list[int>=0] | list[list[int>=0]] | str |
// list[str] | None` with pydantic's smart union: the first member that
// matches strictly wins, else the first that matches in lax mode; when none
// matches, every member's errors are reported in member order.
func (o *object) prompts(name string) []Prompt {
	raw, ok := o.Member(name)
	if !ok || pylax.IsNull(raw) {
		return nil
	}
	if s, ok := pylax.LaxString(raw); ok {
		return []Prompt{{Text: &s}}
	}
	n := o.Node(name)
	items, isList := n.Arr, n.Kind == wire.Array
	for _, strict := range []bool{true, false} {
		if !isList {
			break
		}
		if ids, errs := promptIDs(o.At(name), items, strict); errs == nil {
			return []Prompt{{TokenIDs: ids}}
		}
		if lists, errs := promptIDLists(o.At(name), items, strict); errs == nil {
			out := make([]Prompt, len(lists))
			for i, ids := range lists {
				out[i] = Prompt{TokenIDs: ids}
			}
			return out
		}
		if texts, errs := promptTexts(o.At(name), items); errs == nil {
			out := make([]Prompt, len(texts))
			for i := range texts {
				out[i] = Prompt{Text: &texts[i]}
			}
			return out
		}
	}
	listErr := pylax.FieldError{Type: "list_type", Loc: o.At(name), Msg: "Input should be a valid list", Input: raw}
	if !isList {
		o.Errs = append(o.Errs, listErr, listErr,
			pylax.FieldError{Type: "string_type", Loc: o.At(name), Msg: "Input should be a valid string", Input: raw}, listErr)
		return nil
	}
	_, e1 := promptIDs(o.At(name), items, false)
	_, e2 := promptIDLists(o.At(name), items, false)
	_, e4 := promptTexts(o.At(name), items)
	o.Errs = append(o.Errs, e1...)
	o.Errs = append(o.Errs, e2...)
	o.Errs = append(o.Errs, pylax.FieldError{Type: "string_type", Loc: o.At(name), Msg: "Input should be a valid string", Input: raw})
	o.Errs = append(o.Errs, e4...)
	return nil
}

var bigZero = big.NewInt(0)

// promptIDs validates items as list[int>=0]. Strict mode takes only JSON
// integers.
func promptIDs(loc []any, items []*wire.Node, strict bool) ([]int, []pylax.FieldError) {
	sub := &object{&pylax.Object{}}
	ids := make([]int, 0, len(items))
	for i, it := range items {
		at := append(append([]any{}, loc...), i)
		if strict && (it.Kind != wire.Number || it.IsFloat()) {
			sub.Fail(at, "int_type", "Input should be a valid integer", it.Raw)
			continue
		}
		n, ok := sub.CheckedInt(at, it.Raw, bigZero, nil)
		if ok {
			ids = append(ids, pylax.ClampInt(n))
		}
	}
	return ids, sub.Errs
}

func promptIDLists(loc []any, items []*wire.Node, strict bool) ([][]int, []pylax.FieldError) {
	var errs []pylax.FieldError
	lists := make([][]int, 0, len(items))
	for i, it := range items {
		at := append(append([]any{}, loc...), i)
		if it.Kind != wire.Array {
			errs = append(errs, pylax.FieldError{Type: "list_type", Loc: at, Msg: "Input should be a valid list", Input: it.Raw})
			continue
		}
		ids, e := promptIDs(at, it.Arr, strict)
		errs = append(errs, e...)
		lists = append(lists, ids)
	}
	return lists, errs
}

func promptTexts(loc []any, items []*wire.Node) ([]string, []pylax.FieldError) {
	var errs []pylax.FieldError
	texts := make([]string, 0, len(items))
	for i, it := range items {
		s, ok := it.Text()
		if !ok {
			at := append(append([]any{}, loc...), i)
			errs = append(errs, pylax.FieldError{Type: "string_type", Loc: at, Msg: "Input should be a valid string", Input: it.Raw})
			continue
		}
		texts = append(texts, s)
	}
	return texts, errs
}
