package protocol

import (
	"encoding/json"

	"github.com/vrender/vrender/internal/wire"
)

// ChatCompletionRequest is vLLM's ChatCompletionRequest (the body of
// /v1/chat/completions and /v1/chat/completions/render) as far as the render
// tier reads it. Field defaults are vLLM's; a nil pointer is Python's None.
// Messages and the kwargs stay raw JSON: the render package interprets
// them, and their key order reaches the chat template; tools are typed,
// their schemas kept as trees. Unknown
// fields are ignored (vLLM's OpenAIBaseModel allows extras).
type ChatCompletionRequest struct {
	Messages []json.RawMessage
	// MessageTrees are Messages decoded in the same pass as the body, when
	// it was (nil otherwise); render reads them instead of parsing
	// Messages again. Code that edits Messages must reset them to nil.
	MessageTrees        []*wire.Node
	Model               *string
	FrequencyPenalty    *float64 // default 0.0
	LogitBias           []LogitBiasEntry
	Logprobs            *bool // default false
	TopLogprobs         *int  // default 0
	MaxTokens           *int
	MaxCompletionTokens *int
	N                   *int     // default 1
	PresencePenalty     *float64 // default 0.0
	ResponseFormat      json.RawMessage
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
	AddSpecialTokens     bool // default false
	Documents            json.RawMessage
	ChatTemplate         *string
	ChatTemplateKwargs   json.RawMessage
	MediaIOKwargs        json.RawMessage
	MMProcessorKwargs    json.RawMessage
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
	KVTransferParams          json.RawMessage
	ECTransferParams          json.RawMessage
	VLLMXargs                 json.RawMessage
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

func decodeChat(obj *object, fe *FieldError) (*ChatCompletionRequest, error) {
	if fe != nil {
		return nil, &ValidationError{Errors: []FieldError{*fe}}
	}
	if fe := chatModelValidators(obj); fe != nil {
		return nil, &ValidationError{Errors: []FieldError{*fe}}
	}
	r := decodeChatFields(obj)
	if len(obj.errs) > 0 {
		return nil, &ValidationError{Errors: obj.errs}
	}
	return r, nil
}

func decodeChatFields(obj *object) *ChatCompletionRequest {
	r := &ChatCompletionRequest{}
	r.Messages, r.MessageTrees = obj.messages("messages")
	r.Model = obj.optionalString("model")
	r.FrequencyPenalty = obj.optionalFloat("frequency_penalty", new(0.0))
	r.LogitBias = obj.logitBias("logit_bias")
	r.Logprobs = obj.optionalBool("logprobs", false)
	r.TopLogprobs = obj.optionalInt("top_logprobs", new(0), nil, nil)
	r.MaxTokens = obj.optionalInt("max_tokens", nil, nil, nil)
	r.MaxCompletionTokens = obj.optionalInt("max_completion_tokens", nil, nil, nil)
	r.N = obj.optionalInt("n", new(1), nil, nil)
	r.PresencePenalty = obj.optionalFloat("presence_penalty", new(0.0))
	r.ResponseFormat = obj.responseFormat("response_format")
	r.Seed = obj.optionalInt64("seed")
	r.Stop = obj.stopField("stop")
	r.Stream = obj.optionalBool("stream", false)
	r.StreamOptions = obj.streamOptions("stream_options")
	r.Temperature = obj.optionalFloat("temperature", nil)
	r.TopP = obj.optionalFloat("top_p", nil)
	r.Tools = obj.tools("tools")
	r.ToolChoice = obj.toolChoice("tool_choice", len(r.Tools) > 0)
	r.ReasoningEffort = obj.optionalLiteral("reasoning_effort",
		"none", "minimal", "low", "medium", "high", "xhigh", "max")
	r.ThinkingTokenBudget = obj.thinkingTokenBudget("thinking_token_budget")
	r.IncludeReasoning = obj.boolean("include_reasoning", true)
	r.ParallelToolCalls = obj.optionalBool("parallel_tool_calls", true)
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
	r.PromptLogprobs = obj.optionalInt("prompt_logprobs", nil, nil, nil)
	r.LogprobTokenIDs = obj.optionalIntList("logprob_token_ids", nil)
	r.AllowedTokenIDs = obj.optionalIntList("allowed_token_ids", nil)
	r.BadWords = obj.stringList("bad_words", []string{})

	r.Echo = obj.boolean("echo", false)
	r.AddGenerationPrompt = obj.boolean("add_generation_prompt", true)
	r.ContinueFinalMessage = obj.boolean("continue_final_message", false)
	r.AddSpecialTokens = obj.boolean("add_special_tokens", false)
	r.Documents = obj.documents("documents")
	r.ChatTemplate = obj.optionalString("chat_template")
	r.ChatTemplateKwargs = obj.optionalDict("chat_template_kwargs")
	r.MediaIOKwargs = obj.optionalDictOfDicts("media_io_kwargs")
	r.MMProcessorKwargs = obj.optionalDict("mm_processor_kwargs")
	r.ReturnMMKwargs = obj.boolean("return_mm_kwargs", true)
	r.StructuredOutputs = obj.structuredOutputs("structured_outputs")
	r.Priority = obj.int64Field("priority", 0)
	r.RequestID = obj.optionalString("request_id")
	r.ReturnTokensAsTokenIDs = obj.optionalBool("return_tokens_as_token_ids", false)
	r.ReturnTokenIDs = obj.optionalNullableBool("return_token_ids")
	r.ReturnTokenOffsets = obj.optionalBool("return_token_offsets", false)
	r.ReturnPromptText = obj.optionalNullableBool("return_prompt_text")
	r.ReturnAssistantTokensMask = obj.boolean("return_assistant_tokens_mask", false)
	r.CacheSalt = obj.optionalString("cache_salt")
	r.KVTransferParams = obj.optionalDict("kv_transfer_params")
	r.ECTransferParams = obj.optionalDict("ec_transfer_params")
	r.VLLMXargs = obj.vllmXargs("vllm_xargs")
	r.RepetitionDetection = obj.repetitionDetection("repetition_detection")
	if r.ReturnTokensAsTokenIDs != nil && !*r.ReturnTokensAsTokenIDs {
		// Declared `bool | None = None`: absent is None, not false.
		if _, ok := obj.members["return_tokens_as_token_ids"]; !ok {
			r.ReturnTokensAsTokenIDs = nil
		}
	}
	return r
}

// chatModelValidators runs ChatCompletionRequest's "before" model
// validators in pydantic's order and returns the first failure.
func chatModelValidators(obj *object) *FieldError {
	checks := []func(*object) *FieldError{
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

// validatorError is the error pydantic reports when a model validator
// raises VLLMValidationError (class "VLLMValidationError", param may be "")
// or a plain ValueError (class "ValueError").
func validatorError(obj *object, class, msg, param, value string) *FieldError {
	ex := PyException{Class: class, Message: msg}
	text := msg
	var extras []string
	if param != "" {
		ex.Parameter = &param
		extras = append(extras, "parameter="+param)
	}
	if value != "" {
		extras = append(extras, "value="+value)
	}
	if len(extras) > 0 {
		text += " ("
		for i, x := range extras {
			if i > 0 {
				text += ", "
			}
			text += x
		}
		text += ")"
	}
	return &FieldError{
		Type:  "value_error",
		Msg:   "Value error, " + text,
		Input: obj.raw,
		Ctx:   []CtxEntry{{Key: "error", Value: ex}},
	}
}

func checkCacheSalt(obj *object) *FieldError {
	raw, ok := obj.members["cache_salt"]
	if !ok || isNull(raw) {
		return nil
	}
	if s, isStr := laxString(raw); !isStr || s == "" {
		return validatorError(obj, "VLLMValidationError",
			"Parameter 'cache_salt' must be a non-empty string if provided.", "cache_salt", "")
	}
	return nil
}

func checkGenerationPrompt(obj *object) *FieldError {
	if pyTruthy(obj.members["continue_final_message"]) && pyTruthy(obj.members["add_generation_prompt"]) {
		return validatorError(obj, "VLLMValidationError", errBothPrompts, "", "")
	}
	return nil
}

const toolChoiceUsage = "Correct usage: `{\"type\": \"function\", \"function\": {\"name\": \"my_function\"}}`"

// checkToolUsage is vLLM's check_tool_usage. Its defaulting of an absent
// tool_choice to "auto" is applied by the tool_choice field decoder.
func checkToolUsage(obj *object) *FieldError {
	tools, hasTools := obj.members["tools"]
	if hasTools && jsonKind(tools) == '[' {
		// Members come from a parsed body, so tools is valid JSON.
		if isEmptyArray(tools) {
			return validatorError(obj, "ValueError",
				"`tools` must not be an empty array. Either provide at least one tool or omit the field entirely.", "", "")
		}
	}
	node, hasTC := obj.nodes["tool_choice"]
	if !hasTC {
		return nil
	}
	tc := toolChoiceOf(node)
	switch tc.Kind {
	case ToolChoiceNone, ToolChoiceUnset:
		return nil
	}
	if !hasTools || isNull(tools) {
		return validatorError(obj, "VLLMValidationError", "When using `tool_choice`, `tools` must be set.", "tool_choice", "")
	}
	switch tc.Kind {
	case ToolChoiceAuto, ToolChoiceRequired:
		return nil
	case ToolChoiceBad:
		return toolChoiceError(obj, node)
	case ToolChoiceBadString:
		return validatorError(obj, "VLLMValidationError", "Invalid value for `tool_choice`: "+pyStrOfJSON(node.Raw)+
			"! Only named tools, \"none\", \"auto\" or \"required\" are supported.", "tool_choice", "")
	}
	name := tc.Name
	if list := obj.nodes["tools"]; list.Kind == wire.Array {
		for _, t := range list.Arr {
			fn, _ := t.Get("function")
			if n, ok := fn.Get("name"); ok && n.Kind == wire.String && n.S == name {
				return nil
			}
		}
	}
	return validatorError(obj, "VLLMValidationError",
		"The tool specified in `tool_choice` does not match any of the specified `tools`", "tool_choice", "")
}

// toolChoiceError is check_tool_usage's error for a tool_choice that is
// neither one of the strings nor a named function: the first part of
// {"function": {"name": ...}} it finds missing or wrong.
func toolChoiceError(obj *object, n *wire.Node) *FieldError {
	if n.Kind != wire.Object {
		return validatorError(obj, "VLLMValidationError", "Invalid value for `tool_choice`: "+pyStrOfJSON(n.Raw)+
			"! Only named tools, \"none\", \"auto\" or \"required\" are supported.", "tool_choice", "")
	}
	function, ok := n.Get("function")
	if !ok || function.Kind != wire.Object {
		var raw json.RawMessage
		if ok {
			raw = function.Raw
		}
		return validatorError(obj, "VLLMValidationError", "Invalid value for `function`: `"+pyStrOfJSON(raw)+
			"` in `tool_choice`! "+toolChoiceUsage, "tool_choice.function", "")
	}
	name, ok := function.Get("name")
	if !ok {
		return validatorError(obj, "VLLMValidationError", "Expected field `name` in `function` in `tool_choice`! "+
			toolChoiceUsage, "tool_choice.function.name", "")
	}
	return validatorError(obj, "VLLMValidationError", "Invalid `name` in `function`: `"+pyStrOfJSON(name.Raw)+
		"` in `tool_choice`! "+toolChoiceUsage, "tool_choice.function.name", "")
}

// checkStructuredOutputsCount is check_structured_outputs_count; the
// completion form names the parameter, the chat form does not.
func checkStructuredOutputsCount(withParam bool) func(*object) *FieldError {
	return func(obj *object) *FieldError {
		so := obj.nodes["structured_outputs"]
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
			return validatorError(obj, "VLLMValidationError",
				"You can only use one kind of constraints for structured outputs ('json', 'regex' or 'choice').", param, "")
		}
		if withParam || count == 0 {
			return nil
		}
		tc, hasTC := obj.nodes["tool_choice"]
		if !hasTC {
			return nil // "none", or "auto" once check_tool_usage has run
		}
		switch toolChoiceOf(tc).Kind {
		case ToolChoiceNone, ToolChoiceAuto, ToolChoiceRequired:
			return nil
		}
		return validatorError(obj, "VLLMValidationError",
			"You can only either use constraints for structured outputs or tools, not both.", "", "")
	}
}

func checkChatLogprobs(obj *object) *FieldError {
	m := obj.members
	if pyTruthy(m["logprob_token_ids"]) && pyTruthy(m["use_beam_search"]) {
		return validatorError(obj, "VLLMValidationError", "`logprob_token_ids` is not supported with beam search.", "logprob_token_ids", "")
	}
	if pyTruthy(m["logprob_token_ids"]) && !pyTruthy(m["logprobs"]) {
		return validatorError(obj, "VLLMValidationError", "when using `logprob_token_ids`, `logprobs` must be set to true.", "logprob_token_ids", "")
	}
	if fe := checkPromptLogprobs(obj); fe != nil {
		return fe
	}
	if v, ok := rawNumber(m["top_logprobs"]); ok {
		if v < 0 && v != -1 {
			return validatorError(obj, "VLLMValidationError", "`top_logprobs` must be a positive value or -1.", "top_logprobs", pyNumberStr(string(m["top_logprobs"])))
		}
		if (v == -1 || v > 0) && !pyTruthy(m["logprobs"]) {
			return validatorError(obj, "VLLMValidationError", "when using `top_logprobs`, `logprobs` must be set to true.", "top_logprobs", "")
		}
	}
	return nil
}

func checkPromptLogprobs(obj *object) *FieldError {
	m := obj.members
	v, ok := rawNumber(m["prompt_logprobs"])
	if !ok {
		return nil
	}
	if pyTruthy(m["stream"]) && (v > 0 || v == -1) {
		return validatorError(obj, "VLLMValidationError", "`prompt_logprobs` are not available when `stream=True`.", "prompt_logprobs", "")
	}
	if v < 0 && v != -1 {
		return validatorError(obj, "VLLMValidationError", "`prompt_logprobs` must be a positive value or -1.", "prompt_logprobs", pyNumberStr(string(m["prompt_logprobs"])))
	}
	return nil
}

func checkStreamOptions(obj *object) *FieldError {
	if pyTruthy(obj.members["stream_options"]) && !pyTruthy(obj.members["stream"]) {
		return validatorError(obj, "VLLMValidationError", "Stream options can only be defined when `stream=True`.", "stream_options", "")
	}
	return nil
}

func checkResponseFormat(obj *object) *FieldError {
	raw, ok := obj.members["response_format"]
	if !ok || jsonKind(raw) != '{' {
		return nil
	}
	var rf map[string]json.RawMessage
	_ = json.Unmarshal(raw, &rf)
	switch t, _ := laxString(rf["type"]); t {
	case "json_schema":
		if js, ok := rf["json_schema"]; !ok || isNull(js) {
			return validatorError(obj, "VLLMValidationError",
				"When response_format type is 'json_schema', the 'json_schema' field must be provided.", "response_format", "")
		}
	case "structural_tag":
		// vLLM also compiles the tag with xgrammar here; vrender checks
		// only its shape.
		sub := &object{raw: raw, members: rf}
		if len(structuralTagErrors(sub)) > 0 && len(legacyStructuralTagErrors(sub.fresh())) > 0 {
			return validatorError(obj, "VLLMValidationError", "Invalid response_format structural_tag specification.", "response_format", "")
		}
	}
	return nil
}

// responseFormat is `response_format: ResponseFormat |
// StructuralTagResponseFormat | LegacyStructuralTagResponseFormat | None`,
// kept raw. When no member matches, every member's errors are reported.
func (o *object) responseFormat(name string) json.RawMessage {
	raw, ok := o.members[name]
	if !ok || isNull(raw) {
		return nil
	}
	if jsonKind(raw) != '{' {
		for _, class := range []string{"ResponseFormat", "StructuralTagResponseFormat", "LegacyStructuralTagResponseFormat"} {
			o.fail(o.at(name), "model_type", "Input should be a valid dictionary or instance of "+class, raw,
				CtxEntry{Key: "class_name", Value: class})
		}
		return nil
	}
	sub := o.sub(name, raw)
	e1 := plainResponseFormatErrors(sub)
	e2 := structuralTagErrors(sub.fresh())
	e3 := legacyStructuralTagErrors(sub.fresh())
	if len(e1) == 0 || len(e2) == 0 || len(e3) == 0 {
		return raw
	}
	o.errs = append(o.errs, e1...)
	o.errs = append(o.errs, e2...)
	o.errs = append(o.errs, e3...)
	return nil
}

// literalField checks a required `name: Literal[values...]` field.
func (o *object) literalField(name string, values ...string) {
	if _, ok := o.members[name]; !ok {
		o.missing(name)
		return
	}
	o.optionalLiteral(name, values...)
}

// plainResponseFormatErrors validates ResponseFormat: type text,
// json_object or json_schema, and an optional JsonSchemaResponseFormat.
func plainResponseFormatErrors(o *object) []FieldError {
	o.literalField("type", "text", "json_object", "json_schema")
	if js, ok := o.members["json_schema"]; ok && !isNull(js) {
		if jsonKind(js) != '{' {
			o.fail(o.at("json_schema"), "model_type", "Input should be a valid dictionary or instance of JsonSchemaResponseFormat", js,
				CtxEntry{Key: "class_name", Value: "JsonSchemaResponseFormat"})
		} else {
			var members map[string]json.RawMessage
			_ = json.Unmarshal(js, &members)
			sub := &object{raw: js, members: members, loc: o.at("json_schema")}
			sub.requiredString("name")
			sub.optionalString("description")
			sub.optionalDict("schema")
			sub.optionalNullableBool("strict")
			o.errs = append(o.errs, sub.errs...)
		}
	}
	return o.errs
}

// structuralTagErrors validates StructuralTagResponseFormat.
func structuralTagErrors(o *object) []FieldError {
	o.literalField("type", "structural_tag")
	if _, ok := o.members["format"]; !ok {
		o.missing("format")
	}
	return o.errs
}

// legacyStructuralTagErrors validates LegacyStructuralTagResponseFormat.
func legacyStructuralTagErrors(o *object) []FieldError {
	o.literalField("type", "structural_tag")
	if items, ok := o.list("structures", true); ok {
		for i, item := range items {
			if jsonKind(item) != '{' {
				o.fail(o.at("structures", i), "model_type", "Input should be a valid dictionary or instance of LegacyStructuralTag", item,
					CtxEntry{Key: "class_name", Value: "LegacyStructuralTag"})
				continue
			}
			var members map[string]json.RawMessage
			_ = json.Unmarshal(item, &members)
			sub := &object{raw: item, members: members, loc: o.at("structures", i)}
			sub.requiredString("begin")
			sub.optionalDict("schema")
			sub.requiredString("end")
			o.errs = append(o.errs, sub.errs...)
		}
	}
	if raw, ok := o.members["triggers"]; !ok {
		o.missing("triggers")
	} else if isNull(raw) {
		o.fail(o.at("triggers"), "list_type", "Input should be a valid list", raw)
	} else {
		o.stringList("triggers", nil)
	}
	return o.errs
}
