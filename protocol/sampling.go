package protocol

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/vrender/vrender/internal/pyfmt"
	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
)

// RequestOutputKind is vLLM's RequestOutputKind enum; it travels as its
// integer value because msgspec.to_builtins turns enums into their values.
type RequestOutputKind int

// The output kinds. The render tier sets FINAL_ONLY, or DELTA for stream:true.
const (
	OutputKindCumulative RequestOutputKind = 0
	OutputKindDelta      RequestOutputKind = 1
	OutputKindFinalOnly  RequestOutputKind = 2
)

// SamplingParams is vLLM's SamplingParams as the render endpoint returns it
// inside a GenerateRequest.
//
// vLLM's SamplingParams is a msgspec.Struct declared with omit_defaults=True
// and serialised through msgspec.to_builtins (PydanticMsgspecMixin), so the
// JSON holds only the public fields whose value differs from the declared
// default, in declaration order, and never the private ones
// (_all_stop_token_ids, _eos_token_id, _bad_words_token_ids). MarshalJSON
// follows that rule (checked against vLLM bf578e1, vllm/sampling_params.py and
// vllm/v1/serial_utils.py); the field order below is the declaration order.
//
// A nil slice or pointer stands for Python's None; NewSamplingParams gives
// every field its declared default.
type SamplingParams struct {
	N                          int
	PresencePenalty            float64
	FrequencyPenalty           float64
	RepetitionPenalty          float64
	Temperature                float64
	TopP                       float64
	TopK                       int
	MinP                       float64
	Seed                       *int64
	Stop                       []string
	StopTokenIDs               []int
	IgnoreEOS                  bool
	MaxTokens                  *int
	MinTokens                  int
	Logprobs                   *int
	PromptLogprobs             *int
	LogprobTokenIDs            []int
	FlatLogprobs               bool
	Detokenize                 bool
	SkipSpecialTokens          bool
	SpacesBetweenSpecialTokens bool
	IncludeStopStrInOutput     bool
	OutputKind                 RequestOutputKind
	SkipClone                  bool
	OutputTextBufferLength     int
	StructuredOutputs          *StructuredOutputsParams
	LogitBias                  []LogitBias // nil: None; kept in request order
	AllowedTokenIDs            []int
	ExtraArgs                  json.RawMessage // a JSON object, or nil for None
	RoutedExpertsPromptStart   int
	BadWords                   []string
	SkipReadingPrefixCache     *bool
	ThinkingTokenBudget        *int
	RepetitionDetection        json.RawMessage // a JSON object, or nil for None

	// ExplicitMaxTokens writes max_tokens even when it equals the declared
	// default 16. The render endpoints leave it off as vLLM's msgspec
	// omit_defaults does, but a tokens-only engine applies its own default
	// (max_model_len - prompt) when the key is absent, so the orchestrator,
	// which must get exactly what the client asked for, sets this. Never
	// serialised itself.
	ExplicitMaxTokens bool
}

// LogitBias is one logit_bias entry after vLLM's conversion: the key as an
// int token id, the bias clamped to [-100, 100].
type LogitBias struct {
	TokenID int64
	Bias    float64
}

// StructuredOutputsParams is vLLM's StructuredOutputsParams dataclass.
// msgspec serialises a dataclass with every public field, defaults
// included, so all of these are always written. json is kept as the
// request's tree and written as msgspec writes the value json.loads made
// of it (pylax.AppendPyCompact).
type StructuredOutputsParams struct {
	JSON                        *wire.Node `json:"json"` // a string or an object; nil: None
	Regex                       *string    `json:"regex"`
	Choice                      []string   `json:"choice"`
	Grammar                     *string    `json:"grammar"`
	JSONObject                  *bool      `json:"json_object"`
	DisableAnyWhitespace        bool       `json:"disable_any_whitespace"`
	DisableAdditionalProperties bool       `json:"disable_additional_properties"`
	WhitespacePattern           *string    `json:"whitespace_pattern"`
	StructuralTag               *string    `json:"structural_tag"`
}

// constraintCount is how many constraint kinds are set; vLLM's
// __post_init__ requires exactly one.
func (s *StructuredOutputsParams) constraintCount() int {
	n := 0
	for _, set := range []bool{!s.JSON.IsNull(), s.Regex != nil, s.Choice != nil,
		s.Grammar != nil, s.JSONObject != nil, s.StructuralTag != nil} {
		if set {
			n++
		}
	}
	return n
}

// Validate is StructuredOutputsParams.__post_init__: exactly one kind of
// constraint must be set. The error reads as vLLM's ValueError.
func (s *StructuredOutputsParams) Validate() error {
	switch n := s.constraintCount(); {
	case n > 1:
		return &SamplingParamsError{Msg: "You can only use one kind of structured outputs constraint but multiple are specified: " + s.dictRepr()}
	case n < 1:
		return &SamplingParamsError{Msg: "You must use one kind of structured outputs constraint but none are specified: " + s.dictRepr()}
	}
	return nil
}

// NewSamplingParams returns SamplingParams with vLLM's declared defaults.
func NewSamplingParams() SamplingParams {
	maxTokens := 16
	return SamplingParams{
		N:                          1,
		RepetitionPenalty:          1.0,
		Temperature:                1.0,
		TopP:                       1.0,
		MaxTokens:                  &maxTokens,
		Detokenize:                 true,
		SkipSpecialTokens:          true,
		SpacesBetweenSpecialTokens: true,
	}
}

// vLLM's sampling constants (vllm/sampling_params.py).
const (
	samplingEps = 1e-5
	maxTemp     = 1e-2
)

// Finalize applies SamplingParams.__post_init__: the normalisations vLLM makes
// when the object is built (None lists become empty, a tiny temperature is
// raised, greedy sampling resets top_p/top_k/min_p, the stop-string hold-back
// length, the prefix-cache flag) and the argument checks of _verify_args.
// maxN is VLLM_MAX_N_SEQUENCES. The error reads as vLLM's exception does.
func (p *SamplingParams) Finalize(maxN int) error {
	if p.Temperature > 0 && p.Temperature < maxTemp {
		p.Temperature = maxTemp
	}
	if p.Seed != nil && *p.Seed == -1 {
		p.Seed = nil
	}
	if p.ThinkingTokenBudget != nil && *p.ThinkingTokenBudget == -1 {
		p.ThinkingTokenBudget = nil
	}
	if p.Stop == nil {
		p.Stop = []string{}
	}
	if p.StopTokenIDs == nil {
		p.StopTokenIDs = []int{}
	}
	if p.BadWords == nil {
		p.BadWords = []string{}
	}
	if err := checkStopLimits(p.Stop); err != nil {
		return err
	}
	if len(p.Stop) > 0 && !p.IncludeStopStrInOutput {
		longest := 0
		for _, s := range p.Stop {
			longest = max(longest, utf8.RuneCountInString(s))
		}
		p.OutputTextBufferLength = longest - 1
	}
	if err := p.verify(maxN); err != nil {
		return err
	}
	if p.Temperature < samplingEps { // greedy sampling
		p.TopP, p.TopK, p.MinP = 1.0, 0, 0.0
	}
	if p.SkipReadingPrefixCache == nil {
		skip := p.PromptLogprobs != nil
		p.SkipReadingPrefixCache = &skip
	}
	return nil
}

// SamplingParamsError is a rejected sampling parameter. Parameter and Value
// are set when vLLM raises a VLLMValidationError (whose str() appends them);
// a plain ValueError has neither.
type SamplingParamsError struct {
	Msg       string
	Parameter *string
	Value     *string // Python str() of the value
}

func (e *SamplingParamsError) Error() string {
	var extras []string
	if e.Parameter != nil {
		extras = append(extras, "parameter="+*e.Parameter)
	}
	if e.Value != nil {
		extras = append(extras, "value="+*e.Value)
	}
	if len(extras) == 0 {
		return e.Msg
	}
	s := e.Msg + " ("
	for i, x := range extras {
		if i > 0 {
			s += ", "
		}
		s += x
	}
	return s + ")"
}

func valueErr(format string, args ...any) error {
	return &SamplingParamsError{Msg: fmt.Sprintf(format, args...)}
}

func vllmErr(param, value string, format string, args ...any) error {
	e := &SamplingParamsError{Msg: fmt.Sprintf(format, args...), Parameter: &param}
	if value != "" {
		e.Value = &value
	}
	return e
}

// verify is SamplingParams._verify_args, in vLLM's order.
func (p *SamplingParams) verify(maxN int) error {
	f := pylax.FloatStr
	switch {
	case p.N < 1:
		return valueErr("n must be at least 1, got %d.", p.N)
	case p.N > maxN:
		return valueErr("n must be at most %d, got %d. To increase this limit, set the VLLM_MAX_N_SEQUENCES environment variable.", maxN, p.N)
	case !(p.PresencePenalty >= -2 && p.PresencePenalty <= 2):
		return valueErr("presence_penalty must be in [-2, 2], got %s.", f(p.PresencePenalty))
	case !(p.FrequencyPenalty >= -2 && p.FrequencyPenalty <= 2):
		return valueErr("frequency_penalty must be in [-2, 2], got %s.", f(p.FrequencyPenalty))
	case math.IsInf(p.RepetitionPenalty, 0) || math.IsNaN(p.RepetitionPenalty):
		return valueErr("repetition_penalty must be a finite number, got %s.", f(p.RepetitionPenalty))
	case p.RepetitionPenalty <= 0:
		return valueErr("repetition_penalty must be greater than zero, got %s.", f(p.RepetitionPenalty))
	case math.IsInf(p.Temperature, 0) || math.IsNaN(p.Temperature):
		return vllmErr("temperature", f(p.Temperature), "temperature must be a finite number, got %s.", f(p.Temperature))
	case p.Temperature < 0:
		return vllmErr("temperature", f(p.Temperature), "temperature must be non-negative, got %s.", f(p.Temperature))
	case p.Temperature > 2:
		return vllmErr("temperature", f(p.Temperature), "temperature must be in [0, 2], got %s.", f(p.Temperature))
	case !(p.TopP > 0 && p.TopP <= 1):
		return vllmErr("top_p", f(p.TopP), "top_p must be in (0, 1], got %s.", f(p.TopP))
	case p.TopK < -1:
		return valueErr("top_k must be 0 (disable), or at least 1, got %d.", p.TopK)
	case !(p.MinP >= 0 && p.MinP <= 1):
		return valueErr("min_p must be in [0, 1], got %s.", f(p.MinP))
	case p.MaxTokens != nil && *p.MaxTokens < 1:
		v := strconv.Itoa(*p.MaxTokens)
		return vllmErr("max_tokens", v, "max_tokens must be at least 1, got %s.", v)
	case p.MinTokens < 0:
		return valueErr("min_tokens must be greater than or equal to 0, got %d.", p.MinTokens)
	case p.MaxTokens != nil && p.MinTokens > *p.MaxTokens:
		return valueErr("min_tokens must be less than or equal to max_tokens=%d, got %d.", *p.MaxTokens, p.MinTokens)
	case p.Logprobs != nil && *p.Logprobs != -1 && *p.Logprobs < 0:
		v := strconv.Itoa(*p.Logprobs)
		return vllmErr("logprobs", v, "logprobs must be non-negative or -1, got %s.", v)
	case p.PromptLogprobs != nil && *p.PromptLogprobs != -1 && *p.PromptLogprobs < 0:
		v := strconv.Itoa(*p.PromptLogprobs)
		return vllmErr("prompt_logprobs", v, "prompt_logprobs must be non-negative or -1, got %s.", v)
	}
	for _, s := range p.Stop {
		if s == "" {
			return valueErr("stop cannot contain an empty string.")
		}
	}
	for _, w := range p.BadWords {
		if w == "" {
			return valueErr("bad_words cannot contain an empty string. Got bad_words=%s", pyStrListRepr(p.BadWords))
		}
	}
	if p.Temperature < samplingEps && p.N > 1 {
		return valueErr("n must be 1 when using greedy sampling, got %d.", p.N)
	}
	return nil
}

// AppendJSON appends the fields that differ from their defaults, in
// declaration order (msgspec omit_defaults).
func (p *SamplingParams) AppendJSON(dst []byte) ([]byte, error) {
	w := objectWriter{b: append(dst, '{')}
	if p.N != 1 {
		w.b = strconv.AppendInt(w.key("n"), int64(p.N), 10)
	}
	w.float("presence_penalty", p.PresencePenalty, 0)
	w.float("frequency_penalty", p.FrequencyPenalty, 0)
	w.float("repetition_penalty", p.RepetitionPenalty, 1)
	w.float("temperature", p.Temperature, 1)
	w.float("top_p", p.TopP, 1)
	if p.TopK != 0 {
		w.b = strconv.AppendInt(w.key("top_k"), int64(p.TopK), 10)
	}
	w.float("min_p", p.MinP, 0)
	if p.Seed != nil {
		w.b = strconv.AppendInt(w.key("seed"), *p.Seed, 10)
	}
	if p.Stop != nil {
		w.b = wire.AppendStrings(w.key("stop"), p.Stop)
	}
	if p.StopTokenIDs != nil {
		w.b = wire.AppendInts(w.key("stop_token_ids"), p.StopTokenIDs)
	}
	w.boolean("ignore_eos", p.IgnoreEOS, false)
	switch {
	case p.MaxTokens == nil:
		w.b = append(w.key("max_tokens"), "null"...)
	case *p.MaxTokens != 16 || p.ExplicitMaxTokens:
		w.b = strconv.AppendInt(w.key("max_tokens"), int64(*p.MaxTokens), 10)
	}
	if p.MinTokens != 0 {
		w.b = strconv.AppendInt(w.key("min_tokens"), int64(p.MinTokens), 10)
	}
	if p.Logprobs != nil {
		w.b = strconv.AppendInt(w.key("logprobs"), int64(*p.Logprobs), 10)
	}
	if p.PromptLogprobs != nil {
		w.b = strconv.AppendInt(w.key("prompt_logprobs"), int64(*p.PromptLogprobs), 10)
	}
	if p.LogprobTokenIDs != nil {
		w.b = wire.AppendInts(w.key("logprob_token_ids"), p.LogprobTokenIDs)
	}
	w.boolean("flat_logprobs", p.FlatLogprobs, false)
	w.boolean("detokenize", p.Detokenize, true)
	w.boolean("skip_special_tokens", p.SkipSpecialTokens, true)
	w.boolean("spaces_between_special_tokens", p.SpacesBetweenSpecialTokens, true)
	w.boolean("include_stop_str_in_output", p.IncludeStopStrInOutput, false)
	if p.OutputKind != OutputKindCumulative {
		w.b = strconv.AppendInt(w.key("output_kind"), int64(p.OutputKind), 10)
	}
	w.boolean("skip_clone", p.SkipClone, false)
	if p.OutputTextBufferLength != 0 {
		w.b = strconv.AppendInt(w.key("output_text_buffer_length"), int64(p.OutputTextBufferLength), 10)
	}
	if p.StructuredOutputs != nil {
		w.raw(p.StructuredOutputs.AppendJSON(w.key("structured_outputs")))
	}
	if p.LogitBias != nil {
		// json.dumps writes the int keys as strings.
		w.b = append(w.key("logit_bias"), '{')
		for i, lb := range p.LogitBias {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = append(strconv.AppendInt(append(w.b, '"'), lb.TokenID, 10), '"', ':')
			w.floatValue(lb.Bias)
		}
		w.b = append(w.b, '}')
	}
	if p.AllowedTokenIDs != nil {
		w.b = wire.AppendInts(w.key("allowed_token_ids"), p.AllowedTokenIDs)
	}
	if p.ExtraArgs != nil {
		w.raw(wire.AppendRaw(w.key("extra_args"), p.ExtraArgs))
	}
	if p.RoutedExpertsPromptStart != 0 {
		w.b = strconv.AppendInt(w.key("routed_experts_prompt_start"), int64(p.RoutedExpertsPromptStart), 10)
	}
	if p.BadWords != nil {
		w.b = wire.AppendStrings(w.key("bad_words"), p.BadWords)
	}
	if p.SkipReadingPrefixCache != nil {
		w.b = strconv.AppendBool(w.key("skip_reading_prefix_cache"), *p.SkipReadingPrefixCache)
	}
	if p.ThinkingTokenBudget != nil {
		w.b = strconv.AppendInt(w.key("thinking_token_budget"), int64(*p.ThinkingTokenBudget), 10)
	}
	if p.RepetitionDetection != nil {
		w.raw(wire.AppendRaw(w.key("repetition_detection"), p.RepetitionDetection))
	}
	return append(w.b, '}'), w.err
}

// MarshalJSON is AppendJSON into a new buffer.
func (p SamplingParams) MarshalJSON() ([]byte, error) { return p.AppendJSON(nil) }

// AppendJSON appends every field, as msgspec writes a dataclass.
func (s *StructuredOutputsParams) AppendJSON(dst []byte) ([]byte, error) {
	w := objectWriter{b: append(dst, '{')}
	if s.JSON.IsNull() {
		w.b = append(w.key("json"), "null"...)
	} else {
		w.b = pylax.AppendPyCompact(w.key("json"), s.JSON)
	}
	w.optString("regex", s.Regex)
	if s.Choice == nil {
		w.b = append(w.key("choice"), "null"...)
	} else {
		w.b = wire.AppendStrings(w.key("choice"), s.Choice)
	}
	w.optString("grammar", s.Grammar)
	w.optBool("json_object", s.JSONObject)
	w.b = strconv.AppendBool(w.key("disable_any_whitespace"), s.DisableAnyWhitespace)
	w.b = strconv.AppendBool(w.key("disable_additional_properties"), s.DisableAdditionalProperties)
	w.optString("whitespace_pattern", s.WhitespacePattern)
	w.optString("structural_tag", s.StructuralTag)
	return append(w.b, '}'), w.err
}

// pyJSONFloat is json.dumps of a Python float (its repr; inf and nan as
// JavaScript literals, which vLLM's JSONResponse would refuse anyway).

func pyJSONFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case math.IsNaN(f):
		return "NaN"
	}
	return pylax.FloatStr(f)
}

// objectWriter appends a JSON object member by member; the first error
// (an invalid raw member) is kept.
type objectWriter struct {
	b   []byte
	n   int
	err error
}

// key appends the separator and the member name (a plain ASCII literal)
// and returns w.b, for the value to be appended to.
func (w *objectWriter) key(name string) []byte {
	if w.n > 0 {
		w.b = append(w.b, ',')
	}
	w.n++
	w.b = append(w.b, '"')
	w.b = append(w.b, name...)
	w.b = append(w.b, '"', ':')
	return w.b
}

func (w *objectWriter) float(name string, v, def float64) {
	if v != def {
		w.key(name)
		w.floatValue(v)
	}
}

// floatValue appends json.dumps of a Python float. inf and nan are an
// error, as for vLLM's JSONResponse (allow_nan=False) and encoding/json.
func (w *objectWriter) floatValue(v float64) {
	if (math.IsInf(v, 0) || math.IsNaN(v)) && w.err == nil {
		w.err = fmt.Errorf("protocol: unsupported float value %v", v)
	}
	w.b = append(w.b, pyJSONFloat(v)...)
}

func (w *objectWriter) boolean(name string, v, def bool) {
	if v != def {
		w.b = strconv.AppendBool(w.key(name), v)
	}
}

func (w *objectWriter) optString(name string, v *string) {
	if v == nil {
		w.b = append(w.key(name), "null"...)
	} else {
		w.b = wire.AppendString(w.key(name), *v)
	}
}

func (w *objectWriter) optBool(name string, v *bool) {
	if v == nil {
		w.b = append(w.key(name), "null"...)
	} else {
		w.b = strconv.AppendBool(w.key(name), *v)
	}
}

// raw takes the result of an append that can fail.
func (w *objectWriter) raw(b []byte, err error) {
	w.b = b
	if err != nil && w.err == nil {
		w.err = err
	}
}

// pyStrListRepr is Python's repr of a list of str.
func pyStrListRepr(items []string) string {
	return string(pyfmt.AppendStrListRepr(nil, items, `\ufffd`))
}

// dictRepr is Python's repr of the dataclass's __dict__, as vLLM's
// __post_init__ error shows it.
func (s *StructuredOutputsParams) dictRepr() string {
	optStr := func(p *string) string {
		if p == nil {
			return "None"
		}
		return pylax.StrRepr(*p)
	}
	optBool := func(p *bool) string {
		if p == nil {
			return "None"
		}
		return pyBool(*p)
	}
	choice := "None"
	if s.Choice != nil {
		choice = pyStrListRepr(s.Choice)
	}
	js := "None"
	switch {
	case s.JSON.IsNull():
	case s.JSON.Kind == wire.String:
		js = s.JSON.S
	default:
		js = string(pylax.AppendRepr(nil, s.JSON))
	}
	return fmt.Sprintf("{'json': %s, 'regex': %s, 'choice': %s, 'grammar': %s, 'json_object': %s, "+
		"'disable_any_whitespace': %s, 'disable_additional_properties': %s, 'whitespace_pattern': %s, "+
		"'structural_tag': %s, '_backend': None, '_backend_was_auto': False}",
		js, optStr(s.Regex), choice, optStr(s.Grammar), optBool(s.JSONObject),
		pyBool(s.DisableAnyWhitespace), pyBool(s.DisableAdditionalProperties), optStr(s.WhitespacePattern),
		optStr(s.StructuralTag))
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// Limits on stop strings. vLLM has none; these are generous (the stop
// benchmark's 4,000 strings of 1,000 characters fit) and bound the memory
// of the stop matcher's automaton (about 17 bytes per stop byte).
const (
	MaxStopStrings    = 8192
	MaxStopTotalBytes = 4 << 20
)

func checkStopLimits(stops []string) error {
	if len(stops) > MaxStopStrings {
		n := strconv.Itoa(len(stops))
		return vllmErr("stop", n, "stop must have at most %d strings, got %s.", MaxStopStrings, n)
	}
	total := 0
	for _, s := range stops {
		total += len(s)
	}
	if total > MaxStopTotalBytes {
		n := strconv.Itoa(total)
		return vllmErr("stop", n, "stop strings must total at most %d bytes (UTF-8), got %s.", MaxStopTotalBytes, n)
	}
	return nil
}
