package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/vrender/vrender/internal/pyfmt"
	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/protocol"
)

// Generation-config sources, vLLM's --generation-config values.
const (
	GenerationConfigAuto = "auto" // the model's generation_config.json
	GenerationConfigVLLM = "vllm" // vLLM's neutral defaults only
)

// SamplingDefaults are the server-side sampling defaults vLLM derives from
// the model (ModelConfig.get_diff_sampling_param): the generation config's
// sampling keys, with --override-generation-config applied. A nil field is
// not set; the request's value, or else the OpenAI default, applies.
type SamplingDefaults struct {
	RepetitionPenalty *float64
	Temperature       *float64
	TopK              *int
	TopP              *float64
	MinP              *float64
	MaxTokens         *int // generation config max_new_tokens
	// StopTokenIDs are server-default stop ids merged into every request's
	// (vLLM fills them only for Harmony models, which vrender does not
	// render yet).
	StopTokenIDs []int
	// OverrideMaxTokens caps max_tokens for every request: max_new_tokens
	// of a --generation-config DIR, else of --override-generation-config.
	OverrideMaxTokens *int
}

// LoadSamplingDefaults computes the defaults for m as vLLM does for
// --generation-config source ("auto", "vllm" or a directory holding a
// generation_config.json) and --override-generation-config override (a JSON
// object or nil).
func LoadSamplingDefaults(m *model.Model, source string, override json.RawMessage) (SamplingDefaults, error) {
	var config map[string]any
	switch source {
	case "", GenerationConfigAuto:
		config = copyMap(m.GenerationConfig)
	case GenerationConfigVLLM:
		config = map[string]any{}
	default:
		data, err := os.ReadFile(filepath.Join(source, "generation_config.json"))
		switch {
		case os.IsNotExist(err):
			config = map[string]any{}
		case err != nil:
			return SamplingDefaults{}, fmt.Errorf("--generation-config: %w", err)
		default:
			if err := json.Unmarshal(data, &config); err != nil {
				return SamplingDefaults{}, fmt.Errorf("--generation-config %s: %w", source, err)
			}
		}
	}
	var overrides map[string]any
	if len(bytes.TrimSpace(override)) > 0 {
		if err := json.Unmarshal(override, &overrides); err != nil || overrides == nil {
			return SamplingDefaults{}, fmt.Errorf("--override-generation-config must be a JSON object")
		}
	}
	if config == nil {
		config = map[string]any{}
	}
	for k, v := range overrides {
		config[k] = v
	}

	var d SamplingDefaults
	var err error
	num := func(key string) *float64 {
		v, ok := config[key].(float64)
		if !ok {
			if config[key] != nil && err == nil {
				err = fmt.Errorf("generation config %s must be a number, got %v", key, config[key])
			}
			return nil
		}
		return &v
	}
	integer := func(key string) *int {
		f := num(key)
		if f == nil {
			return nil
		}
		if *f != math.Trunc(*f) {
			if err == nil {
				err = fmt.Errorf("generation config %s must be an integer, got %v", key, *f)
			}
			return nil
		}
		n := int(*f)
		return &n
	}
	d.RepetitionPenalty = num("repetition_penalty")
	d.Temperature = num("temperature")
	d.TopK = integer("top_k")
	d.TopP = num("top_p")
	d.MinP = num("min_p")
	d.MaxTokens = integer("max_new_tokens")
	if err != nil {
		return SamplingDefaults{}, err
	}
	switch source {
	case "", GenerationConfigAuto, GenerationConfigVLLM:
		if v, ok := overrides["max_new_tokens"].(float64); ok {
			n := int(v)
			d.OverrideMaxTokens = &n
		}
	default:
		d.OverrideMaxTokens = d.MaxTokens
	}
	return d, nil
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// OpenAI defaults vLLM applies when neither the request nor the generation
// config sets a value (_DEFAULT_SAMPLING_PARAMS).
const (
	defaultRepetitionPenalty = 1.0
	defaultTemperature       = 1.0
	defaultTopP              = 1.0
	defaultTopK              = 0
	defaultMinP              = 0.0
)

// MaxNSequences is VLLM_MAX_N_SEQUENCES' default, the largest n.
const MaxNSequences = 16384

// MaxTokens is vLLM's get_max_tokens: the smallest of the room left in the
// context, the request's (or the generation config's) max tokens, the
// override cap. inputLen is the prompt length after truncation.
func MaxTokens(maxModelLen int, requested *int, inputLen int, d SamplingDefaults, truncate *int) (int, error) {
	if truncate != nil {
		limit := *truncate
		if limit == -1 {
			limit = maxModelLen
		}
		inputLen = min(inputLen, limit)
	}
	if maxModelLen < inputLen {
		return 0, &BadRequestError{Message: fmt.Sprintf(
			"Input length (%d) exceeds model's maximum context length (%d).", inputLen, maxModelLen)}
	}
	n := maxModelLen - inputLen
	fallback := requested
	if fallback == nil {
		fallback = d.MaxTokens
	}
	if fallback != nil {
		n = min(n, *fallback)
	}
	if d.OverrideMaxTokens != nil {
		n = min(n, *d.OverrideMaxTokens)
	}
	return n, nil
}

// SamplingFields are the request fields to_sampling_params reads; chat and
// completion requests fill them from their own fields.
type SamplingFields struct {
	N                      *int
	PresencePenalty        *float64
	FrequencyPenalty       *float64
	RepetitionPenalty      *float64
	Temperature            *float64
	TopP                   *float64
	TopK                   *int
	MinP                   *float64
	Seed                   *int64
	Stop                   []string
	StopTokenIDs           []int
	Logprobs               *int
	PromptLogprobs         *int
	LogprobTokenIDs        []int
	IgnoreEOS              bool
	MinTokens              int
	SkipSpecialTokens      bool
	SpacesBetweenSpecial   bool
	IncludeStopStrInOutput bool
	Stream                 bool
	StructuredOutputs      *protocol.StructuredOutputsParams
	ResponseFormat         *node // protocol's decoded object; nil: none
	LogitBias              []protocol.LogitBiasEntry
	BadWords               []string
	ThinkingTokenBudget    *int
	AllowedTokenIDs        []int
	VLLMXargs              *node // protocol's decoded object; nil: none
	KVTransferParams       *node // protocol's decoded objects; nil: none
	ECTransferParams       *node
	RepetitionDetection    json.RawMessage
}

// ChatSamplingParams is ChatCompletionRequest.to_sampling_params.
func ChatSamplingParams(req *protocol.ChatCompletionRequest, maxTokens int, d SamplingDefaults) (protocol.SamplingParams, error) {
	var logprobs *int
	if req.Logprobs != nil && *req.Logprobs && len(req.LogprobTokenIDs) == 0 {
		logprobs = req.TopLogprobs
	}
	promptLogprobs := req.PromptLogprobs
	if promptLogprobs == nil && req.Echo {
		promptLogprobs = req.TopLogprobs
	}
	return buildSamplingParams(SamplingFields{
		N: req.N, PresencePenalty: req.PresencePenalty, FrequencyPenalty: req.FrequencyPenalty,
		RepetitionPenalty: req.RepetitionPenalty, Temperature: req.Temperature, TopP: req.TopP, TopK: req.TopK,
		MinP: req.MinP, Seed: req.Seed, Stop: req.Stop, StopTokenIDs: req.StopTokenIDs,
		Logprobs: logprobs, PromptLogprobs: promptLogprobs, LogprobTokenIDs: req.LogprobTokenIDs,
		IgnoreEOS: req.IgnoreEOS, MinTokens: req.MinTokens, SkipSpecialTokens: req.SkipSpecialTokens,
		SpacesBetweenSpecial: req.SpacesBetweenSpecial, IncludeStopStrInOutput: req.IncludeStopStrInOutput,
		Stream: req.Stream != nil && *req.Stream, StructuredOutputs: req.StructuredOutputs,
		ResponseFormat: req.ResponseFormat, LogitBias: req.LogitBias, BadWords: req.BadWords,
		ThinkingTokenBudget: req.ThinkingTokenBudget, AllowedTokenIDs: req.AllowedTokenIDs,
		VLLMXargs: req.VLLMXargs, KVTransferParams: req.KVTransferParams, ECTransferParams: req.ECTransferParams,
		RepetitionDetection: req.RepetitionDetection,
	}, maxTokens, d)
}

// CompletionSamplingParams is CompletionRequest.to_sampling_params.
func CompletionSamplingParams(req *protocol.CompletionRequest, maxTokens int, d SamplingDefaults) (protocol.SamplingParams, error) {
	logprobs := req.Logprobs
	if len(req.LogprobTokenIDs) > 0 {
		logprobs = nil
	}
	echo := req.Echo != nil && *req.Echo
	promptLogprobs := req.PromptLogprobs
	if promptLogprobs == nil && echo {
		promptLogprobs = req.Logprobs
	}
	if echo && req.MaxTokens != nil && *req.MaxTokens == 0 {
		maxTokens = 1 // echo without generation
	}
	n := req.N
	return buildSamplingParams(SamplingFields{
		N: &n, PresencePenalty: req.PresencePenalty, FrequencyPenalty: req.FrequencyPenalty,
		RepetitionPenalty: req.RepetitionPenalty, Temperature: req.Temperature, TopP: req.TopP, TopK: req.TopK,
		MinP: req.MinP, Seed: req.Seed, Stop: req.Stop, StopTokenIDs: req.StopTokenIDs,
		Logprobs: logprobs, PromptLogprobs: promptLogprobs, LogprobTokenIDs: req.LogprobTokenIDs,
		IgnoreEOS: req.IgnoreEOS, MinTokens: req.MinTokens, SkipSpecialTokens: req.SkipSpecialTokens,
		SpacesBetweenSpecial: req.SpacesBetweenSpecial, IncludeStopStrInOutput: req.IncludeStopStrInOutput,
		Stream: req.Stream != nil && *req.Stream, StructuredOutputs: req.StructuredOutputs,
		ResponseFormat: req.ResponseFormat, LogitBias: req.LogitBias, BadWords: req.BadWords,
		ThinkingTokenBudget: req.ThinkingTokenBudget, AllowedTokenIDs: req.AllowedTokenIDs,
		VLLMXargs: req.VLLMXargs, KVTransferParams: req.KVTransferParams, ECTransferParams: req.ECTransferParams,
		RepetitionDetection: req.RepetitionDetection,
	}, maxTokens, d)
}

// buildSamplingParams is the shared body of to_sampling_params followed by
// SamplingParams.from_optional and __post_init__.
func buildSamplingParams(f SamplingFields, maxTokens int, d SamplingDefaults) (protocol.SamplingParams, error) {
	p := protocol.NewSamplingParams()
	pick := func(req, def *float64, openai float64) float64 {
		switch {
		case req != nil:
			return *req
		case def != nil:
			return *def
		}
		return openai
	}
	orZero := func(v *float64) float64 {
		if v == nil {
			return 0
		}
		return *v
	}
	if f.N != nil {
		p.N = *f.N
	}
	p.PresencePenalty = orZero(f.PresencePenalty)
	p.FrequencyPenalty = orZero(f.FrequencyPenalty)
	p.RepetitionPenalty = pick(f.RepetitionPenalty, d.RepetitionPenalty, defaultRepetitionPenalty)
	p.Temperature = pick(f.Temperature, d.Temperature, defaultTemperature)
	p.TopP = pick(f.TopP, d.TopP, defaultTopP)
	p.MinP = pick(f.MinP, d.MinP, defaultMinP)
	switch {
	case f.TopK != nil:
		p.TopK = *f.TopK
	case d.TopK != nil:
		p.TopK = *d.TopK
	default:
		p.TopK = defaultTopK
	}
	p.Seed = f.Seed
	p.Stop = f.Stop
	p.StopTokenIDs = mergeStopTokenIDs(f.StopTokenIDs, d.StopTokenIDs)
	p.Logprobs = f.Logprobs
	p.PromptLogprobs = f.PromptLogprobs
	if len(f.LogprobTokenIDs) > 0 {
		p.LogprobTokenIDs = f.LogprobTokenIDs
	}
	p.IgnoreEOS = f.IgnoreEOS
	p.MaxTokens = &maxTokens
	p.MinTokens = f.MinTokens
	p.SkipSpecialTokens = f.SkipSpecialTokens
	p.SpacesBetweenSpecialTokens = f.SpacesBetweenSpecial
	p.IncludeStopStrInOutput = f.IncludeStopStrInOutput
	p.OutputKind = protocol.OutputKindFinalOnly
	if f.Stream {
		p.OutputKind = protocol.OutputKindDelta
	}
	so, err := structuredOutputs(f.StructuredOutputs, f.ResponseFormat)
	if err != nil {
		return protocol.SamplingParams{}, err
	}
	p.StructuredOutputs = so
	if f.LogitBias != nil {
		if p.LogitBias, err = convertLogitBias(f.LogitBias); err != nil {
			return protocol.SamplingParams{}, err
		}
	}
	p.BadWords = f.BadWords
	p.ThinkingTokenBudget = f.ThinkingTokenBudget
	p.AllowedTokenIDs = f.AllowedTokenIDs
	if p.ExtraArgs, err = extraArgs(f.VLLMXargs, f.KVTransferParams, f.ECTransferParams); err != nil {
		return protocol.SamplingParams{}, err
	}
	p.SkipClone = true // vLLM builds the params fresh per request
	p.RepetitionDetection = f.RepetitionDetection
	if err := p.Finalize(MaxNSequences); err != nil {
		return protocol.SamplingParams{}, err
	}
	return p, nil
}

// mergeStopTokenIDs merges the server's default stop ids into the
// request's, keeping the first occurrence of each (dict.fromkeys).
func mergeStopTokenIDs(req, defaults []int) []int {
	if len(defaults) == 0 {
		return req
	}
	if len(req) == 0 {
		return append([]int{}, defaults...)
	}
	seen := make(map[int]bool, len(req)+len(defaults))
	out := make([]int, 0, len(req)+len(defaults))
	for _, id := range append(append([]int{}, req...), defaults...) {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// convertLogitBias is from_optional's conversion: keys to int token ids,
// biases clamped to [-100, 100]. Keys that are not Python int literals are
// refused with vLLM's message.
func convertLogitBias(entries []protocol.LogitBiasEntry) ([]protocol.LogitBias, error) {
	out := make([]protocol.LogitBias, 0, len(entries))
	var invalid []string
	index := map[int64]int{}
	for _, e := range entries {
		id, err := pyfmt.ParseInt(e.Key)
		if err != nil {
			invalid = append(invalid, e.Key)
			continue
		}
		bias := math.Min(100, math.Max(-100, e.Bias))
		if i, dup := index[id]; dup { // "1" and "01" are the same key in the int dict
			out[i].Bias = bias
			continue
		}
		index[id] = len(out)
		out = append(out, protocol.LogitBias{TokenID: id, Bias: bias})
	}
	if len(invalid) > 0 {
		repr := "["
		for i, k := range invalid {
			if i > 0 {
				repr += ", "
			}
			repr += pyStrRepr(k)
		}
		repr += "]"
		return nil, &BadRequestError{
			Message: "logit_bias contains key(s) that cannot be converted to integer token IDs: " + repr +
				" (parameter=logit_bias, value=" + repr + ")",
			Param: "logit_bias",
		}
	}
	return out, nil
}

// extraArgs is vLLM's extra_args: vllm_xargs (protocol's decoded object)
// with kv_transfer_params and ec_transfer_params (protocol's decoded
// objects) added when they are non-empty; nil when all are empty.
func extraArgs(xargs, kv, ec *node) (json.RawMessage, error) {
	args := &node{Kind: wire.Object}
	if xargs != nil {
		args.Keys, args.Vals = slices.Clone(xargs.Keys), slices.Clone(xargs.Vals)
	}
	set := func(key string, v *node) error {
		switch {
		case v == nil:
			return nil
		case v.Kind != wire.Object:
			return errors.New(key + ": want a JSON object")
		case len(v.Keys) > 0: // empty dicts are falsy: not added
			args.Set(key, v)
		}
		return nil
	}
	if err := set("kv_transfer_params", kv); err != nil {
		return nil, err
	}
	if err := set("ec_transfer_params", ec); err != nil {
		return nil, err
	}
	if len(args.Keys) == 0 {
		return nil, nil
	}
	b := []byte{'{'}
	for i, key := range args.Keys {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := protocol.MarshalJSON(key)
		b = append(append(b, k...), ':')
		b = pylax.AppendPyCompact(b, args.Vals[i])
	}
	return append(b, '}'), nil
}

// structuredOutputs applies response_format (protocol's decoded object) on
// top of structured_outputs as to_sampling_params does: json_object and
// json_schema set the matching constraint; structural_tag sets
// structural_tag to the JSON text of the response format.
func structuredOutputs(so *protocol.StructuredOutputsParams, rf *node) (*protocol.StructuredOutputsParams, error) {
	if rf == nil {
		return so, nil
	}
	if rf.Kind != wire.Object {
		return nil, &BadRequestError{Message: "invalid response_format: not a JSON object", Param: "response_format"}
	}
	var out protocol.StructuredOutputsParams
	if so != nil {
		out = *so
	}
	typ, _ := rf.Get("type")
	switch kind, _ := typ.Text(); kind {
	case "json_object":
		t := true
		out.JSONObject = &t
	case "json_schema":
		out.JSON = nil
		js, _ := rf.Get("json_schema")
		if s, ok := js.Get("schema"); ok && !s.IsNull() {
			out.JSON = s
		}
	case "structural_tag":
		s, err := structuralTagPayload(rf)
		if err != nil {
			return nil, err
		}
		out.StructuralTag = &s
	default:
		return so, nil
	}
	if err := out.Validate(); err != nil {
		return nil, &BadRequestError{Message: err.Error(), Err: err}
	}
	return &out, nil
}

// structuralTagPayload is json.dumps(response_format.model_dump(by_alias=True))
// for a structural_tag response format rf (an object): the model's fields
// in declaration order (the legacy form's structures with begin, schema,
// end), then the extra fields in request order.
func structuralTagPayload(rf *node) (string, error) {
	_, hasStructures := rf.Get("structures")
	_, hasTriggers := rf.Get("triggers")
	declared := []string{"type", "format"}
	if hasStructures && hasTriggers {
		declared = []string{"type", "structures", "triggers"}
	}
	b, err := appendDumpsOrdered(nil, rf, declared, func(dst []byte, key string, v *node) ([]byte, error) {
		if key != "structures" {
			return pylax.AppendPyDumps(dst, v), nil
		}
		if v.Kind != wire.Array {
			return nil, errors.New("structures: want a JSON list")
		}
		dst = append(dst, '[')
		for i, it := range v.Arr {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			var err error
			if dst, err = appendDumpsOrdered(dst, it, []string{"begin", "schema", "end"}, nil); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	})
	return string(b), err
}

// appendDumpsOrdered appends json.dumps of object n with the declared keys
// first (null when absent), then its other members in document order;
// conv, when set, writes a value in place of appendPyDumps.
func appendDumpsOrdered(dst []byte, n *node, declared []string, conv func(dst []byte, key string, v *node) ([]byte, error)) ([]byte, error) {
	if n.Kind != wire.Object {
		return nil, errors.New("want a JSON object")
	}
	first := true
	write := func(key string, v *node) error {
		if !first {
			dst = append(dst, ", "...)
		}
		first = false
		dst = append(wire.AppendStringASCII(dst, key), ": "...)
		if conv == nil {
			dst = pylax.AppendPyDumps(dst, v)
			return nil
		}
		var err error
		dst, err = conv(dst, key, v)
		return err
	}
	dst = append(dst, '{')
	for _, key := range declared {
		v, ok := n.Get(key)
		if !ok {
			v = wire.NullNode
		}
		if err := write(key, v); err != nil {
			return nil, err
		}
	}
	for i, key := range n.Keys {
		if !slices.Contains(declared, key) {
			if err := write(key, n.Vals[i]); err != nil {
				return nil, err
			}
		}
	}
	return append(dst, '}'), nil
}
