package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vrender/vrender/internal/pyfmt"
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
// included, so all of these are always written. The constraint values stay
// raw JSON: they are passed through to the engine unchanged.
type StructuredOutputsParams struct {
	JSON                        json.RawMessage `json:"json"` // str or object
	Regex                       *string         `json:"regex"`
	Choice                      []string        `json:"choice"`
	Grammar                     *string         `json:"grammar"`
	JSONObject                  *bool           `json:"json_object"`
	DisableAnyWhitespace        bool            `json:"disable_any_whitespace"`
	DisableAdditionalProperties bool            `json:"disable_additional_properties"`
	WhitespacePattern           *string         `json:"whitespace_pattern"`
	StructuralTag               *string         `json:"structural_tag"`
}

// constraintCount is how many constraint kinds are set; vLLM's
// __post_init__ requires exactly one.
func (s *StructuredOutputsParams) constraintCount() int {
	n := 0
	for _, set := range []bool{s.JSON != nil && !isNull(s.JSON), s.Regex != nil, s.Choice != nil,
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
	f := pyFloatStr
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
	w.raw(wire.AppendRaw(w.key("json"), s.JSON))
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
	return pyFloatStr(f)
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

// The field decoders below implement pydantic's lax rules for the sampling
// fields that chat and completion requests share. Each records its errors
// on the object and returns the field's value (or its default).

func ptr[T any](v T) *T { return &v }

// laxFloat applies pydantic's lax float rules; typ is "" on success.
func laxFloat(raw json.RawMessage) (f float64, typ, msg string) {
	const (
		typeMsg  = "Input should be a valid number"
		parseMsg = "Input should be a valid number, unable to parse string as a number"
	)
	switch k := jsonKind(raw); {
	case k == 't':
		return 1, "", ""
	case k == 'f':
		return 0, "", ""
	case k == '"':
		s, _ := laxString(raw)
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, "float_parsing", parseMsg
		}
		return v, "", ""
	case k == '-' || isDigit(k) || k == 'I' || k == 'N':
		v, err := strconv.ParseFloat(strings.TrimSpace(string(raw)), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, "float_type", typeMsg
		}
		return v, "", ""
	}
	return 0, "float_type", typeMsg
}

// optionalFloat is a `name: float | None = def` field.
func (o *object) optionalFloat(name string, def *float64) *float64 {
	raw, ok := o.members[name]
	if !ok {
		return def
	}
	if isNull(raw) {
		return nil
	}
	v, typ, msg := laxFloat(raw)
	if typ != "" {
		o.fail(o.at(name), typ, msg, raw)
		return def
	}
	return &v
}

// float is a `name: float = def` field.
func (o *object) float(name string, def float64) float64 {
	raw, ok := o.members[name]
	if !ok {
		return def
	}
	v, typ, msg := laxFloat(raw)
	if typ != "" {
		o.fail(o.at(name), typ, msg, raw)
		return def
	}
	return v
}

// checkedInt validates one int value at loc with optional ge/le bounds.
func (o *object) checkedInt(loc []any, raw json.RawMessage, ge, le *big.Int) (*big.Int, bool) {
	n, typ, msg := laxInt(raw)
	switch {
	case typ != "":
		o.fail(loc, typ, msg, raw)
		return nil, false
	case ge != nil && n.Cmp(ge) < 0:
		o.fail(loc, "greater_than_equal", "Input should be greater than or equal to "+ge.String(), raw,
			CtxEntry{Key: "ge", Value: ge})
		return nil, false
	case le != nil && n.Cmp(le) > 0:
		o.fail(loc, "less_than_equal", "Input should be less than or equal to "+le.String(), raw,
			CtxEntry{Key: "le", Value: le})
		return nil, false
	}
	return n, true
}

var (
	minInt64 = big.NewInt(math.MinInt64)
	maxInt64 = big.NewInt(math.MaxInt64)
)

// clampInt converts a Python int to a Go int, saturating: values beyond
// the machine range are far outside every limit vLLM applies later.
func clampInt(n *big.Int) int {
	switch {
	case n.IsInt64():
		return int(n.Int64())
	case n.Sign() < 0:
		return math.MinInt
	}
	return math.MaxInt
}

// optionalInt is a `name: int | None = def` field with optional bounds.
func (o *object) optionalInt(name string, def *int, ge, le *int) *int {
	raw, ok := o.members[name]
	if !ok {
		return def
	}
	if isNull(raw) {
		return nil
	}
	var geB, leB *big.Int
	if ge != nil {
		geB = big.NewInt(int64(*ge))
	}
	if le != nil {
		leB = big.NewInt(int64(*le))
	}
	n, ok := o.checkedInt(o.at(name), raw, geB, leB)
	if !ok {
		return def
	}
	v := clampInt(n)
	return &v
}

// integer is a `name: int = def` field.
func (o *object) integer(name string, def int) int {
	raw, ok := o.members[name]
	if !ok {
		return def
	}
	n, ok := o.checkedInt(o.at(name), raw, nil, nil)
	if !ok {
		return def
	}
	return clampInt(n)
}

var (
	int64Min = big.NewInt(math.MinInt64)
	int64Max = big.NewInt(math.MaxInt64)
)

// optionalInt64 is a `name: int | None = Field(None, ge=-2**63, le=2**63-1)` field.
func (o *object) optionalInt64(name string) *int64 {
	raw, ok := o.members[name]
	if !ok || isNull(raw) {
		return nil
	}
	n, ok := o.checkedInt(o.at(name), raw, int64Min, int64Max)
	if !ok {
		return nil
	}
	v := n.Int64()
	return &v
}

// int64Field is a `name: int = Field(def, ge=-2**63, le=2**63-1)` field.
func (o *object) int64Field(name string, def int64) int64 {
	raw, ok := o.members[name]
	if !ok {
		return def
	}
	n, ok := o.checkedInt(o.at(name), raw, int64Min, int64Max)
	if !ok {
		return def
	}
	return n.Int64()
}

// optionalNullableBool is a `name: bool | None = None` field.
func (o *object) optionalNullableBool(name string) *bool {
	if _, ok := o.members[name]; !ok {
		return nil
	}
	return o.optionalBool(name, false)
}

// optionalIntList is a `name: list[int] | None = def` field.
func (o *object) optionalIntList(name string, def []int) []int {
	raw, ok := o.members[name]
	if !ok {
		return def
	}
	if isNull(raw) {
		return nil
	}
	items, ok := o.list(name, false)
	if !ok {
		return def
	}
	out := make([]int, 0, len(items))
	valid := true
	for i, item := range items {
		// pydantic keeps any Python int; a Go int cannot, and saturating
		// would silently change the id, so ids past int64 are refused.
		n, ok := o.checkedInt(o.at(name, i), item, minInt64, maxInt64)
		if !ok {
			valid = false
			continue
		}
		out = append(out, int(n.Int64()))
	}
	if !valid {
		return def
	}
	return out
}

// stringList is a `name: list[str] = def` field (null is invalid).
func (o *object) stringList(name string, def []string) []string {
	raw, ok := o.members[name]
	if !ok {
		return def
	}
	if isNull(raw) {
		o.fail(o.at(name), "list_type", "Input should be a valid list", raw)
		return def
	}
	items, ok := o.list(name, false)
	if !ok {
		return def
	}
	out := make([]string, 0, len(items))
	valid := true
	for i, item := range items {
		s, ok := laxString(item)
		if !ok {
			o.fail(o.at(name, i), "string_type", "Input should be a valid string", item)
			valid = false
			continue
		}
		out = append(out, s)
	}
	if !valid {
		return def
	}
	return out
}

// stopField is `stop: str | list[str] | None = []`. A union failure lists
// one error per member, as pydantic does (vLLM drops the member names from
// the location).
func (o *object) stopField(name string) []string {
	raw, ok := o.members[name]
	if !ok {
		return []string{}
	}
	if isNull(raw) {
		return nil
	}
	if s, ok := laxString(raw); ok {
		return []string{s}
	}
	if jsonKind(raw) != '[' {
		o.fail(o.at(name), "string_type", "Input should be a valid string", raw)
		o.fail(o.at(name), "list_type", "Input should be a valid list", raw)
		return nil
	}
	var items []json.RawMessage
	_ = json.Unmarshal(raw, &items)
	out := make([]string, 0, len(items))
	var bad []int
	for i, item := range items {
		s, ok := laxString(item)
		if !ok {
			bad = append(bad, i)
			continue
		}
		out = append(out, s)
	}
	if len(bad) > 0 {
		o.fail(o.at(name), "string_type", "Input should be a valid string", raw)
		for _, i := range bad {
			o.fail(o.at(name, i), "string_type", "Input should be a valid string", items[i])
		}
		return nil
	}
	return out
}

// optionalLiteral is a `name: Literal[values...] | None = None` field.
func (o *object) optionalLiteral(name string, values ...string) *string {
	raw, ok := o.members[name]
	if !ok || isNull(raw) {
		return nil
	}
	if s, ok := laxString(raw); ok {
		for _, v := range values {
			if s == v {
				return &s
			}
		}
	}
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = pyStrRepr(v)
	}
	expected := quoted[len(quoted)-1]
	if len(quoted) > 1 {
		expected = strings.Join(quoted[:len(quoted)-1], ", ") + " or " + expected
	}
	o.fail(o.at(name), "literal_error", "Input should be "+expected, raw, CtxEntry{Key: "expected", Value: expected})
	return nil
}

// logitBias is `logit_bias: dict[str, float] | None`, kept in key order.
func (o *object) logitBias(name string) []LogitBiasEntry {
	raw := o.optionalDict(name)
	if raw == nil {
		return nil
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil {
		return nil
	}
	out := make([]LogitBiasEntry, 0, len(members))
	valid := true
	for _, key := range keysInOrder(raw, members) {
		v, typ, msg := laxFloat(members[key])
		if typ != "" {
			o.fail(o.at(name, key), typ, msg, members[key])
			valid = false
			continue
		}
		out = append(out, LogitBiasEntry{Key: key, Bias: v})
	}
	if !valid {
		return nil
	}
	return out
}

// thinkingTokenBudget is vLLM's ThinkingTokenBudget: a non-negative int, or
// -1 (unlimited, stored as None); bools and floats are refused by its
// before-validator.
func (o *object) thinkingTokenBudget(name string) *int {
	raw, ok := o.members[name]
	if !ok || isNull(raw) {
		return nil
	}
	const msg = "`thinking_token_budget` must be a non-negative integer or -1 for unlimited."
	k := jsonKind(raw)
	text := strings.TrimSpace(string(raw))
	fail := func() *int {
		o.fail(o.at(name), "value_error", "Value error, "+msg+" (parameter=thinking_token_budget, value="+pyStrOfJSON(raw)+")", raw,
			CtxEntry{Key: "error", Value: PyException{Class: "VLLMValidationError", Message: msg, Parameter: ptr(name)}})
		return nil
	}
	if k != '-' && !isDigit(k) || strings.ContainsAny(text, ".eE") {
		return fail()
	}
	n, ok := new(big.Int).SetString(text, 10)
	if !ok || n.Cmp(big.NewInt(-1)) < 0 {
		return fail()
	}
	if n.Sign() < 0 {
		return nil
	}
	v := clampInt(n)
	return &v
}

// rawNumber reads a JSON number as vLLM's model validators see it
// (data.get(x) compared with ints); ok is false for anything else.
func rawNumber(raw json.RawMessage) (float64, bool) {
	k := jsonKind(raw)
	if k != '-' && !isDigit(k) {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(string(raw)), 64)
	return f, err == nil
}

// nested validates a member typed as a nested pydantic model (or, with
// dataclass, a dataclass) named class: nil for an absent or null member,
// nil after recording pydantic's type error for a non-object, else the
// member as an object whose errors are located under name.
func (o *object) nested(name string, dataclass bool, class string) (sub *object, raw json.RawMessage) {
	raw, ok := o.members[name]
	if !ok || isNull(raw) {
		return nil, raw
	}
	if jsonKind(raw) != '{' {
		if dataclass {
			o.fail(o.at(name), "dataclass_type", "Input should be a dictionary or an instance of "+class, raw,
				CtxEntry{Key: "class_name", Value: class})
		} else {
			o.fail(o.at(name), "model_type", "Input should be a valid dictionary or instance of "+class, raw,
				CtxEntry{Key: "class_name", Value: class})
		}
		return nil, raw
	}
	return o.sub(name, raw), raw
}

// sub is the JSON object raw, the member name of o, as an object of its own.
func (o *object) sub(name string, raw json.RawMessage) *object {
	var members map[string]json.RawMessage
	_ = json.Unmarshal(raw, &members)
	return &object{raw: raw, members: members, loc: o.at(name)}
}

// streamOptions is `stream_options: StreamOptions | None`.
func (o *object) streamOptions(name string) *StreamOptions {
	sub, _ := o.nested(name, false, "StreamOptions")
	if sub == nil {
		return nil
	}
	so := &StreamOptions{
		IncludeUsage:         sub.optionalBool("include_usage", false),
		ContinuousUsageStats: sub.optionalBool("continuous_usage_stats", false),
	}
	o.errs = append(o.errs, sub.errs...)
	return so
}

// dictList is a `name: list[dict] | None` field whose items are objects
// carrying a "function" object with a string "name" (OpenAI tools).
func (o *object) dictList(name string) []json.RawMessage {
	items, ok := o.list(name, false)
	if !ok {
		return nil
	}
	valid := true
	for i, item := range items {
		if jsonKind(item) != '{' {
			o.fail(o.at(name, i), "model_type", "Input should be a valid dictionary or instance of ChatCompletionToolsParam", item,
				CtxEntry{Key: "class_name", Value: "ChatCompletionToolsParam"})
			valid = false
			continue
		}
		toolNode := o.item(name, i)
		tool := membersOfTree(item, toolNode)
		if t, ok := tool["type"]; ok {
			if s, _ := laxString(t); s != "function" {
				o.fail(o.at(name, i, "type"), "literal_error", "Input should be 'function'", t,
					CtxEntry{Key: "expected", Value: "'function'"})
				valid = false
			}
		}
		fn, ok := tool["function"]
		switch {
		case !ok:
			o.fail(o.at(name, i, "function"), "missing", "Field required", item)
			valid = false
			continue
		case jsonKind(fn) != '{':
			o.fail(o.at(name, i, "function"), "model_type", "Input should be a valid dictionary or instance of FunctionDefinition", fn,
				CtxEntry{Key: "class_name", Value: "FunctionDefinition"})
			valid = false
			continue
		}
		var fnNode *wire.Node
		if toolNode != nil {
			fnNode, _ = toolNode.Get("function")
		}
		def := membersOfTree(fn, fnNode)
		if n, ok := def["name"]; !ok {
			o.fail(o.at(name, i, "function", "name"), "missing", "Field required", fn)
			valid = false
		} else if _, isStr := laxString(n); !isStr {
			o.fail(o.at(name, i, "function", "name"), "string_type", "Input should be a valid string", n)
			valid = false
		}
		// FunctionDefinition's optional fields: description: str | None,
		// parameters: dict[str, Any] | None.
		if d, ok := def["description"]; ok && !isNull(d) {
			if _, isStr := laxString(d); !isStr {
				o.fail(o.at(name, i, "function", "description"), "string_type", "Input should be a valid string", d)
				valid = false
			}
		}
		if p, ok := def["parameters"]; ok && !isNull(p) && jsonKind(p) != '{' {
			o.fail(o.at(name, i, "function", "parameters"), "dict_type", "Input should be a valid dictionary", p)
			valid = false
		}
	}
	if !valid {
		return nil
	}
	return items
}

// toolChoice reads tool_choice, defaulting an absent one to "none", or
// "auto" when tools are given (check_tool_usage). The model validator has
// already refused every other invalid form.
func (o *object) toolChoice(name string, haveTools bool) ToolChoice {
	n, ok := o.nodes[name]
	switch {
	case !ok && haveTools:
		return ToolChoice{Kind: ToolChoiceAuto}
	case !ok:
		return ToolChoice{Kind: ToolChoiceNone}
	}
	o.namedToolChoiceType(name, n)
	return toolChoiceOf(n)
}

// documents is `documents: list[dict[str, str]] | None`.
func (o *object) documents(name string) json.RawMessage {
	items, ok := o.list(name, false)
	if !ok {
		return nil
	}
	valid := true
	for i, item := range items {
		if jsonKind(item) != '{' {
			o.fail(o.at(name, i), "dict_type", "Input should be a valid dictionary", item)
			valid = false
			continue
		}
		var doc map[string]json.RawMessage
		_ = json.Unmarshal(item, &doc)
		for _, key := range keysInOrder(item, doc) {
			if _, ok := laxString(doc[key]); !ok {
				o.fail(o.at(name, i, key), "string_type", "Input should be a valid string", doc[key])
				valid = false
			}
		}
	}
	if !valid {
		return nil
	}
	return o.members[name]
}

// structuredOutputs is `structured_outputs: StructuredOutputsParams | None`.
func (o *object) structuredOutputs(name string) *StructuredOutputsParams {
	sub, raw := o.nested(name, true, "StructuredOutputsParams")
	if sub == nil {
		return nil
	}
	so := &StructuredOutputsParams{}
	if j, ok := sub.members["json"]; ok && !isNull(j) {
		if k := jsonKind(j); k != '"' && k != '{' {
			sub.fail(sub.at("json", "str"), "string_type", "Input should be a valid string", j)
			sub.fail(sub.at("json", "dict[any,any]"), "dict_type", "Input should be a valid dictionary", j)
		} else {
			so.JSON = j
		}
	}
	so.Regex = sub.optionalString("regex")
	if items, ok := sub.list("choice", false); ok {
		so.Choice = make([]string, 0, len(items))
		for i, item := range items {
			s, ok := laxString(item)
			if !ok {
				sub.fail(sub.at("choice", i), "string_type", "Input should be a valid string", item)
			}
			so.Choice = append(so.Choice, s)
		}
	}
	so.Grammar = sub.optionalString("grammar")
	if _, ok := sub.members["json_object"]; ok {
		so.JSONObject = sub.optionalBool("json_object", false)
	}
	so.DisableAnyWhitespace = sub.boolean("disable_any_whitespace", false)
	so.DisableAdditionalProperties = sub.boolean("disable_additional_properties", false)
	so.WhitespacePattern = sub.optionalString("whitespace_pattern")
	so.StructuralTag = sub.optionalString("structural_tag")
	if len(sub.errs) > 0 {
		o.errs = append(o.errs, sub.errs...)
		return nil
	}
	if n := so.constraintCount(); n != 1 {
		msg := "You must use one kind of structured outputs constraint but none are specified: " + so.dictRepr()
		if n > 1 {
			msg = "You can only use one kind of structured outputs constraint but multiple are specified: " + so.dictRepr()
		}
		o.fail(o.at(name), "value_error", "Value error, "+msg, raw,
			CtxEntry{Key: "error", Value: PyException{Class: "ValueError", Message: msg}})
		return nil
	}
	return so
}

// dictRepr is Python's repr of the dataclass's __dict__, as vLLM's
// __post_init__ error shows it.
func (s *StructuredOutputsParams) dictRepr() string {
	optStr := func(p *string) string {
		if p == nil {
			return "None"
		}
		return pyStrRepr(*p)
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
	if s.JSON != nil {
		js = pyStrOfJSON(s.JSON)
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

// vllmXargs is `vllm_xargs: dict[str, str | int | float | list[str | int |
// float]] | None`, kept raw.
func (o *object) vllmXargs(name string) json.RawMessage {
	raw := o.optionalDict(name)
	if raw == nil {
		return nil
	}
	var members map[string]json.RawMessage
	_ = json.Unmarshal(raw, &members)
	scalar := func(v json.RawMessage) bool {
		k := jsonKind(v)
		return k == '"' || k == '-' || isDigit(k)
	}
	valid := true
	for _, key := range keysInOrder(raw, members) {
		v := members[key]
		if scalar(v) {
			continue
		}
		if jsonKind(v) == '[' {
			var items []json.RawMessage
			_ = json.Unmarshal(v, &items)
			ok := true
			for _, it := range items {
				ok = ok && scalar(it)
			}
			if ok {
				continue
			}
		}
		o.fail(o.at(name, key), "union_type", "Input should be a valid string, integer, number or list", v)
		valid = false
	}
	if !valid {
		return nil
	}
	return raw
}

// repetitionDetection is `repetition_detection: RepetitionDetectionParams |
// None`, returned as the dataclass serialises: all three fields.
func (o *object) repetitionDetection(name string) json.RawMessage {
	sub, raw := o.nested(name, true, "RepetitionDetectionParams")
	if sub == nil {
		return nil
	}
	maxSize := sub.integer("max_pattern_size", 0)
	minSize := sub.integer("min_pattern_size", 0)
	minCount := sub.integer("min_count", 0)
	if len(sub.errs) > 0 {
		o.errs = append(o.errs, sub.errs...)
		return nil
	}
	var msg string
	switch {
	case maxSize < 0 || minSize < 0 || minSize > maxSize:
		msg = "max_pattern_size, min_pattern_size must be >=0, with min_pattern_size <= max_pattern_size. " +
			"Set both to 0 to disable repetitive pattern detection."
	case maxSize > 0 && minCount < 2:
		msg = "min_count must be >= 2 to detect repetitive patterns in engine output. " +
			"If you do not wish to detect repetitive patterns, set max_pattern_size to 0."
	}
	if msg != "" {
		o.fail(o.at(name), "value_error", "Value error, "+msg, raw,
			CtxEntry{Key: "error", Value: PyException{Class: "ValueError", Message: msg}})
		return nil
	}
	return json.RawMessage(fmt.Sprintf(`{"max_pattern_size":%d,"min_pattern_size":%d,"min_count":%d}`, maxSize, minSize, minCount))
}

// pyStrOfJSON is Python's str() of the value json.loads makes of raw (None
// for an absent value): what an f-string shows.
func pyStrOfJSON(raw json.RawMessage) string {
	if s, ok := laxString(raw); ok {
		return s
	}
	return pyReprOfJSON(raw)
}

// pyReprOfJSON is Python's repr() of the value json.loads makes of raw.
func pyReprOfJSON(raw json.RawMessage) string {
	switch jsonKind(raw) {
	case 0, 'n':
		return "None"
	case 't':
		return "True"
	case 'f':
		return "False"
	case '"':
		s, _ := laxString(raw)
		return pyStrRepr(s)
	case '[':
		var items []json.RawMessage
		_ = json.Unmarshal(raw, &items)
		var b strings.Builder
		b.WriteByte('[')
		for i, it := range items {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(pyReprOfJSON(it))
		}
		b.WriteByte(']')
		return b.String()
	case '{':
		var members map[string]json.RawMessage
		_ = json.Unmarshal(raw, &members)
		var b strings.Builder
		b.WriteByte('{')
		for i, k := range keysInOrder(raw, members) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(pyStrRepr(k))
			b.WriteString(": ")
			b.WriteString(pyReprOfJSON(members[k]))
		}
		b.WriteByte('}')
		return b.String()
	}
	return pyNumberStr(strings.TrimSpace(string(raw)))
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
