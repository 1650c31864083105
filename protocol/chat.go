package protocol

import (
	"encoding/json"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
)

// ChatCompletionRequest is vLLM's ChatCompletionRequest (the body of
// /v1/chat/completions and /v1/chat/completions/render) as far as the render
// tier reads it. Field defaults are vLLM's; a nil pointer is Python's None.
// Messages are typed (render applies vLLM's message rules to them), and
// tools (their schemas kept as trees); the kwargs stay raw JSON: the render
// package interprets them, and their key order reaches the chat template.
// Unknown fields are ignored (vLLM's OpenAIBaseModel allows extras).
type ChatCompletionRequest struct {
	Messages            []Message
	Model               *string
	FrequencyPenalty    *float64 // default 0.0
	LogitBias           []LogitBiasEntry
	Logprobs            *bool // default false
	TopLogprobs         *int  // default 0
	MaxTokens           *int
	MaxCompletionTokens *int
	N                   *int       // default 1
	PresencePenalty     *float64   // default 0.0
	ResponseFormat      *wire.Node // an object; nil when absent or null
	Seed                *int64
	Stop                []string // nil: None; a single string becomes a one-item list
	Stream              *bool    // default false
	StreamOptions       *StreamOptions
	Temperature         *float64
	TopP                *float64
	Tools               []Tool // nil when absent or null
	// ToolChoice is tool_choice; an absent one is "none", or "auto" when
	// tools are given (vLLM's check_tool_usage), a null one unset.
	ToolChoice          ToolChoice
	ReasoningEffort     *string
	ThinkingTokenBudget *int
	IncludeReasoning    bool  // default true
	ParallelToolCalls   *bool // default true
	User                *string

	UseBeamSearch          bool
	TopK                   *int
	MinP                   *float64
	RepetitionPenalty      *float64
	LengthPenalty          float64 // default 1.0
	StopTokenIDs           []int   // default []; nil: None
	IncludeStopStrInOutput bool
	IgnoreEOS              bool
	MinTokens              int
	SkipSpecialTokens      bool // default true
	SpacesBetweenSpecial   bool // spaces_between_special_tokens, default true
	TruncatePromptTokens   *int
	TruncationSide         *string // "left" | "right" | nil
	PromptLogprobs         *int
	LogprobTokenIDs        []int
	AllowedTokenIDs        []int
	BadWords               []string // default []

	Echo                 bool
	AddGenerationPrompt  bool // default true
	ContinueFinalMessage bool
	AddSpecialTokens     bool       // default false
	Documents            *wire.Node // a list of objects; nil when absent or null
	ChatTemplate         *string
	ChatTemplateKwargs   *wire.Node // an object; nil when absent or null
	MediaIOKwargs        *wire.Node // an object of objects; nil when absent or null
	MMProcessorKwargs    *wire.Node // an object; nil when absent or null
	// ReturnMMKwargs is the render route's return_mm_kwargs (default
	// true): false answers features without the processed tensors.
	ReturnMMKwargs            bool
	StructuredOutputs         *StructuredOutputsParams
	Priority                  int64
	RequestID                 *string
	ReturnTokensAsTokenIDs    *bool
	ReturnTokenIDs            *bool
	ReturnTokenOffsets        *bool // default false
	ReturnPromptText          *bool
	ReturnAssistantTokensMask bool
	CacheSalt                 *string
	KVTransferParams          *wire.Node // objects; nil when absent, null or invalid
	ECTransferParams          *wire.Node
	VLLMXargs                 *wire.Node      // an object; nil when absent, null or invalid
	RepetitionDetection       json.RawMessage // normalised: all three fields
}

// LogitBiasEntry is one logit_bias member as the client sent it.
type LogitBiasEntry struct {
	Key  string
	Bias float64
}

// UnmarshalJSON decodes and validates data; see DecodeChatCompletionRequest.
func (r *ChatCompletionRequest) UnmarshalJSON(data []byte) error {
	v, err := DecodeChatCompletionRequest(data)
	if err != nil {
		return err
	}
	*r = *v
	return nil
}

// DecodeChatCompletionRequest validates a chat completion body as vLLM's
// pydantic model does: the model validators first (in the order pydantic
// runs them, the last declared first; the first to fail is the only error),
// then every field. Errors are *ValidationError.
func DecodeChatCompletionRequest(data []byte) (*ChatCompletionRequest, error) {
	obj, fe := decodeBody(data, "ChatCompletionRequest")
	return decodeChat(obj, fe)
}

// DecodeChatCompletionTree is DecodeChatCompletionRequest for the tree
// ParseJSONTree decoded from body (nil: an empty body), without scanning
// it again. The request aliases body.
func DecodeChatCompletionTree(body []byte, root *wire.Node) (*ChatCompletionRequest, error) {
	obj, fe := decodeTree(root, body, "ChatCompletionRequest")
	return decodeChat(obj, fe)
}

func decodeChat(obj *object, fe *pylax.FieldError) (*ChatCompletionRequest, error) {
	if fe != nil {
		return nil, &pylax.ValidationError{Errors: []pylax.FieldError{*fe}}
	}
	if fe := chatModelValidators(obj); fe != nil {
		return nil, &pylax.ValidationError{Errors: []pylax.FieldError{*fe}}
	}
	r := decodeChatFields(obj)
	if len(obj.Errs) > 0 {
		return nil, &pylax.ValidationError{Errors: obj.Errs}
	}
	return r, nil
}

func decodeChatFields(obj *object) *ChatCompletionRequest {
	r := &ChatCompletionRequest{}
	r.Messages = obj.messages("messages")
	r.Model = obj.OptionalString("model")
	r.FrequencyPenalty = obj.OptionalFloat("frequency_penalty", new(0.0))
	r.LogitBias = obj.logitBias("logit_bias")
	r.Logprobs = obj.OptionalBool("logprobs", false)
	r.TopLogprobs = obj.OptionalInt("top_logprobs", new(0), nil, nil)
	r.MaxTokens = obj.OptionalInt("max_tokens", nil, nil, nil)
	r.MaxCompletionTokens = obj.OptionalInt("max_completion_tokens", nil, nil, nil)
	r.N = obj.OptionalInt("n", new(1), nil, nil)
	r.PresencePenalty = obj.OptionalFloat("presence_penalty", new(0.0))
	r.ResponseFormat = obj.responseFormat("response_format")
	r.Seed = obj.OptionalInt64("seed")
	r.Stop = obj.StopField("stop")
	r.Stream = obj.OptionalBool("stream", false)
	r.StreamOptions = obj.streamOptions("stream_options")
	r.Temperature = obj.OptionalFloat("temperature", nil)
	r.TopP = obj.OptionalFloat("top_p", nil)
	r.Tools = obj.tools("tools")
	r.ToolChoice = obj.toolChoice("tool_choice", len(r.Tools) > 0)
	r.ReasoningEffort = obj.OptionalLiteral("reasoning_effort",
		"none", "minimal", "low", "medium", "high", "xhigh", "max")
	r.ThinkingTokenBudget = obj.thinkingTokenBudget("thinking_token_budget")
	r.IncludeReasoning = obj.Bool("include_reasoning", true)
	r.ParallelToolCalls = obj.OptionalBool("parallel_tool_calls", true)
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
	r.PromptLogprobs = obj.OptionalInt("prompt_logprobs", nil, nil, nil)
	r.LogprobTokenIDs = obj.OptionalIntList("logprob_token_ids", nil)
	r.AllowedTokenIDs = obj.OptionalIntList("allowed_token_ids", nil)
	r.BadWords = obj.StringList("bad_words", []string{})

	r.Echo = obj.Bool("echo", false)
	r.AddGenerationPrompt = obj.Bool("add_generation_prompt", true)
	r.ContinueFinalMessage = obj.Bool("continue_final_message", false)
	r.AddSpecialTokens = obj.Bool("add_special_tokens", false)
	r.Documents = obj.documents("documents")
	r.ChatTemplate = obj.OptionalString("chat_template")
	r.ChatTemplateKwargs = obj.OptionalDictNode("chat_template_kwargs")
	r.MediaIOKwargs = obj.OptionalDictOfDicts("media_io_kwargs")
	r.MMProcessorKwargs = obj.OptionalDictNode("mm_processor_kwargs")
	r.ReturnMMKwargs = obj.Bool("return_mm_kwargs", true)
	r.StructuredOutputs = obj.structuredOutputs("structured_outputs")
	r.Priority = obj.Int64("priority", 0)
	r.RequestID = obj.OptionalString("request_id")
	r.ReturnTokensAsTokenIDs = obj.OptionalBool("return_tokens_as_token_ids", false)
	r.ReturnTokenIDs = obj.OptionalNullableBool("return_token_ids")
	r.ReturnTokenOffsets = obj.OptionalBool("return_token_offsets", false)
	r.ReturnPromptText = obj.OptionalNullableBool("return_prompt_text")
	r.ReturnAssistantTokensMask = obj.Bool("return_assistant_tokens_mask", false)
	r.CacheSalt = obj.OptionalString("cache_salt")
	r.KVTransferParams = obj.OptionalDictNode("kv_transfer_params")
	r.ECTransferParams = obj.OptionalDictNode("ec_transfer_params")
	r.VLLMXargs = obj.vllmXargs("vllm_xargs")
	r.RepetitionDetection = obj.repetitionDetection("repetition_detection")
	if r.ReturnTokensAsTokenIDs != nil && !*r.ReturnTokensAsTokenIDs {
		// Declared `bool | None = None`: absent is None, not false.
		if _, ok := obj.Member("return_tokens_as_token_ids"); !ok {
			r.ReturnTokensAsTokenIDs = nil
		}
	}
	return r
}

// chatModelValidators runs ChatCompletionRequest's "before" model
// validators in pydantic's order and returns the first failure.
func chatModelValidators(obj *object) *pylax.FieldError {
	checks := []func(*object) *pylax.FieldError{
		checkCacheSalt,
		checkGenerationPrompt,
		checkToolUsage,
		checkStructuredOutputsCount(false),
		checkChatLogprobs,
		checkStreamOptions,
		checkResponseFormat,
	}
	for _, check := range checks {
		if fe := check(obj); fe != nil {
			return fe
		}
	}
	return nil
}

func checkCacheSalt(obj *object) *pylax.FieldError {
	raw, ok := obj.Member("cache_salt")
	if !ok || pylax.IsNull(raw) {
		return nil
	}
	if s, isStr := pylax.LaxString(raw); !isStr || s == "" {
		return obj.ValidatorError("VLLMValidationError",
			"Parameter 'cache_salt' must be a non-empty string if provided.", "cache_salt", "")
	}
	return nil
}

func checkGenerationPrompt(obj *object) *pylax.FieldError {
	if obj.TruthyMember("continue_final_message") && obj.TruthyMember("add_generation_prompt") {
		return obj.ValidatorError("VLLMValidationError", errBothPrompts, "", "")
	}
	return nil
}

const toolChoiceUsage = "Correct usage: `{\"type\": \"function\", \"function\": {\"name\": \"my_function\"}}`"

// checkToolUsage is vLLM's check_tool_usage. Its defaulting of an absent
// tool_choice to "auto" is applied by the tool_choice field decoder.
func checkToolUsage(obj *object) *pylax.FieldError {
	tools, hasTools := obj.Nodes["tools"]
	if hasTools && tools.Kind == wire.Array {
		if len(tools.Arr) == 0 {
			return obj.ValidatorError("ValueError",
				"`tools` must not be an empty array. Either provide at least one tool or omit the field entirely.", "", "")
		}
	}
	node, hasTC := obj.Nodes["tool_choice"]
	if !hasTC {
		return nil
	}
	tc := toolChoiceOf(node)
	switch tc.Kind {
	case ToolChoiceNone, ToolChoiceUnset:
		return nil
	}
	if tools.IsNull() {
		return obj.ValidatorError("VLLMValidationError", "When using `tool_choice`, `tools` must be set.", "tool_choice", "")
	}
	switch tc.Kind {
	case ToolChoiceAuto, ToolChoiceRequired:
		return nil
	case ToolChoiceBad:
		return toolChoiceError(obj, node)
	case ToolChoiceBadString:
		return obj.ValidatorError("VLLMValidationError", "Invalid value for `tool_choice`: "+pylax.StrOfJSON(node.Raw)+
			"! Only named tools, \"none\", \"auto\" or \"required\" are supported.", "tool_choice", "")
	}
	name := tc.Name
	if list := obj.Nodes["tools"]; list.Kind == wire.Array {
		for _, t := range list.Arr {
			fn, _ := t.Get("function")
			if n, ok := fn.Get("name"); ok && n.Kind == wire.String && n.S == name {
				return nil
			}
		}
	}
	return obj.ValidatorError("VLLMValidationError",
		"The tool specified in `tool_choice` does not match any of the specified `tools`", "tool_choice", "")
}

// toolChoiceError is check_tool_usage's error for a tool_choice that is
// neither one of the strings nor a named function: the first part of
// {"function": {"name": ...}} it finds missing or wrong.
func toolChoiceError(obj *object, n *wire.Node) *pylax.FieldError {
	if n.Kind != wire.Object {
		return obj.ValidatorError("VLLMValidationError", "Invalid value for `tool_choice`: "+pylax.StrOfJSON(n.Raw)+
			"! Only named tools, \"none\", \"auto\" or \"required\" are supported.", "tool_choice", "")
	}
	function, ok := n.Get("function")
	if !ok || function.Kind != wire.Object {
		var raw json.RawMessage
		if ok {
			raw = function.Raw
		}
		return obj.ValidatorError("VLLMValidationError", "Invalid value for `function`: `"+pylax.StrOfJSON(raw)+
			"` in `tool_choice`! "+toolChoiceUsage, "tool_choice.function", "")
	}
	name, ok := function.Get("name")
	if !ok {
		return obj.ValidatorError("VLLMValidationError", "Expected field `name` in `function` in `tool_choice`! "+
			toolChoiceUsage, "tool_choice.function.name", "")
	}
	return obj.ValidatorError("VLLMValidationError", "Invalid `name` in `function`: `"+pylax.StrOfJSON(name.Raw)+
		"` in `tool_choice`! "+toolChoiceUsage, "tool_choice.function.name", "")
}

// checkStructuredOutputsCount is check_structured_outputs_count; the
// completion form names the parameter, the chat form does not.
func checkStructuredOutputsCount(withParam bool) func(*object) *pylax.FieldError {
	return func(obj *object) *pylax.FieldError {
		so := obj.Nodes["structured_outputs"]
		if so == nil || so.Kind != wire.Object {
			return nil
		}
		count := 0
		for _, k := range []string{"json", "regex", "choice"} {
			if v, ok := so.Get(k); ok && !v.IsNull() {
				count++
			}
		}
		param := ""
		if withParam {
			param = "structured_outputs"
		}
		if count > 1 {
			return obj.ValidatorError("VLLMValidationError",
				"You can only use one kind of constraints for structured outputs ('json', 'regex' or 'choice').", param, "")
		}
		if withParam || count == 0 {
			return nil
		}
		tc, hasTC := obj.Nodes["tool_choice"]
		if !hasTC {
			return nil // "none", or "auto" once check_tool_usage has run
		}
		switch toolChoiceOf(tc).Kind {
		case ToolChoiceNone, ToolChoiceAuto, ToolChoiceRequired:
			return nil
		}
		return obj.ValidatorError("VLLMValidationError",
			"You can only either use constraints for structured outputs or tools, not both.", "", "")
	}
}

func checkChatLogprobs(obj *object) *pylax.FieldError {
	if obj.TruthyMember("logprob_token_ids") && obj.TruthyMember("use_beam_search") {
		return obj.ValidatorError("VLLMValidationError", "`logprob_token_ids` is not supported with beam search.", "logprob_token_ids", "")
	}
	if obj.TruthyMember("logprob_token_ids") && !obj.TruthyMember("logprobs") {
		return obj.ValidatorError("VLLMValidationError", "when using `logprob_token_ids`, `logprobs` must be set to true.", "logprob_token_ids", "")
	}
	if fe := checkPromptLogprobs(obj); fe != nil {
		return fe
	}
	if v, ok := pylax.RawNumber(obj.raw("top_logprobs")); ok {
		if v < 0 && v != -1 {
			return obj.ValidatorError("VLLMValidationError", "`top_logprobs` must be a positive value or -1.", "top_logprobs", pylax.NumberStr(string(obj.raw("top_logprobs"))))
		}
		if (v == -1 || v > 0) && !obj.TruthyMember("logprobs") {
			return obj.ValidatorError("VLLMValidationError", "when using `top_logprobs`, `logprobs` must be set to true.", "top_logprobs", "")
		}
	}
	return nil
}

func checkPromptLogprobs(obj *object) *pylax.FieldError {
	v, ok := pylax.RawNumber(obj.raw("prompt_logprobs"))
	if !ok {
		return nil
	}
	if obj.TruthyMember("stream") && (v > 0 || v == -1) {
		return obj.ValidatorError("VLLMValidationError", "`prompt_logprobs` are not available when `stream=True`.", "prompt_logprobs", "")
	}
	if v < 0 && v != -1 {
		return obj.ValidatorError("VLLMValidationError", "`prompt_logprobs` must be a positive value or -1.", "prompt_logprobs", pylax.NumberStr(string(obj.raw("prompt_logprobs"))))
	}
	return nil
}

func checkStreamOptions(obj *object) *pylax.FieldError {
	if obj.TruthyMember("stream_options") && !obj.TruthyMember("stream") {
		return obj.ValidatorError("VLLMValidationError", "Stream options can only be defined when `stream=True`.", "stream_options", "")
	}
	return nil
}

func checkResponseFormat(obj *object) *pylax.FieldError {
	rf := obj.Nodes["response_format"]
	if rf == nil || rf.Kind != wire.Object {
		return nil
	}
	t, _ := rf.Get("type")
	switch s, _ := t.Text(); s {
	case "json_schema":
		if js, _ := rf.Get("json_schema"); js.IsNull() {
			return obj.ValidatorError("VLLMValidationError",
				"When response_format type is 'json_schema', the 'json_schema' field must be provided.", "response_format", "")
		}
	case "structural_tag":
		// vLLM also compiles the tag with xgrammar here; vrender checks
		// only its shape.
		sub := &object{pylax.ObjectOf(rf)}
		if len(structuralTagErrors(sub)) > 0 && len(legacyStructuralTagErrors(sub.fresh())) > 0 {
			return obj.ValidatorError("VLLMValidationError", "Invalid response_format structural_tag specification.", "response_format", "")
		}
	}
	return nil
}

// responseFormat is `response_format: ResponseFormat |
// StructuralTagResponseFormat | LegacyStructuralTagResponseFormat | None`,
// as its tree. When no member matches, every member's errors are reported.
func (o *object) responseFormat(name string) *wire.Node {
	raw, ok := o.Member(name)
	if !ok || pylax.IsNull(raw) {
		return nil
	}
	if pylax.Kind(raw) != '{' {
		for _, class := range []string{"ResponseFormat", "StructuralTagResponseFormat", "LegacyStructuralTagResponseFormat"} {
			o.Fail(o.At(name), "model_type", "Input should be a valid dictionary or instance of "+class, raw,
				pylax.CtxEntry{Key: "class_name", Value: class})
		}
		return nil
	}
	sub := o.sub(name)
	e1 := plainResponseFormatErrors(sub)
	e2 := structuralTagErrors(sub.fresh())
	e3 := legacyStructuralTagErrors(sub.fresh())
	if len(e1) == 0 || len(e2) == 0 || len(e3) == 0 {
		return o.Node(name)
	}
	o.Errs = append(o.Errs, e1...)
	o.Errs = append(o.Errs, e2...)
	o.Errs = append(o.Errs, e3...)
	return nil
}

// literalField checks a required `name: Literal[values...]` field.
func (o *object) literalField(name string, values ...string) {
	if _, ok := o.Member(name); !ok {
		o.Missing(name)
		return
	}
	o.OptionalLiteral(name, values...)
}

// plainResponseFormatErrors validates ResponseFormat: type text,
// json_object or json_schema, and an optional JsonSchemaResponseFormat.
func plainResponseFormatErrors(o *object) []pylax.FieldError {
	o.literalField("type", "text", "json_object", "json_schema")
	if js := o.Node("json_schema"); !js.IsNull() {
		if js.Kind != wire.Object {
			o.Fail(o.At("json_schema"), "model_type", "Input should be a valid dictionary or instance of JsonSchemaResponseFormat", js.Raw,
				pylax.CtxEntry{Key: "class_name", Value: "JsonSchemaResponseFormat"})
		} else {
			sub := o.sub("json_schema")
			sub.RequiredString("name")
			sub.OptionalString("description")
			sub.OptionalDict("schema")
			sub.OptionalNullableBool("strict")
			o.Errs = append(o.Errs, sub.Errs...)
		}
	}
	return o.Errs
}

// structuralTagErrors validates StructuralTagResponseFormat.
func structuralTagErrors(o *object) []pylax.FieldError {
	o.literalField("type", "structural_tag")
	if _, ok := o.Member("format"); !ok {
		o.Missing("format")
	}
	return o.Errs
}

// legacyStructuralTagErrors validates LegacyStructuralTagResponseFormat.
func legacyStructuralTagErrors(o *object) []pylax.FieldError {
	o.literalField("type", "structural_tag")
	if items, ok := o.ListNodes("structures", true); ok {
		for i, item := range items {
			if item.Kind != wire.Object {
				o.Fail(o.At("structures", i), "model_type", "Input should be a valid dictionary or instance of LegacyStructuralTag", item.Raw,
					pylax.CtxEntry{Key: "class_name", Value: "LegacyStructuralTag"})
				continue
			}
			sub := &object{pylax.ObjectAt(item, o.At("structures", i))}
			sub.RequiredString("begin")
			sub.OptionalDict("schema")
			sub.RequiredString("end")
			o.Errs = append(o.Errs, sub.Errs...)
		}
	}
	if raw, ok := o.Member("triggers"); !ok {
		o.Missing("triggers")
	} else if pylax.IsNull(raw) {
		o.Fail(o.At("triggers"), "list_type", "Input should be a valid list", raw)
	} else {
		o.StringList("triggers", nil)
	}
	return o.Errs
}
