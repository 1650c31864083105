package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ResponsesRequest is the body of POST /v1/responses/render: the members of
// vLLM's ResponsesRequest (vllm/entrypoints/openai/responses/protocol.py)
// that rendering reads. Input items, tools and tool_choice stay raw JSON in
// request order; the conversion to chat messages reads them.
type ResponsesRequest struct {
	Model *string
	// Input is a string (InputText) or a list of items (InputItems).
	InputText          *string
	InputItems         []json.RawMessage
	Instructions       *string
	MaxOutputTokens    *int
	PreviousResponseID *string
	Reasoning          *ResponsesReasoning
	Stream             bool
	TopLogprobs        *int
	Include            []string
	Text               *ResponsesText
	ToolChoice         json.RawMessage // "auto" when absent
	Tools              []json.RawMessage
	Truncation         string
	RequestID          *string
	CacheSalt          *string
	Priority           int64
	KVTransferParams   json.RawMessage
	// Metadata, User, ParallelToolCalls and MaxToolCalls are only echoed
	// in the served response object.
	Metadata          json.RawMessage
	User              *string
	ParallelToolCalls bool // default true
	MaxToolCalls      *int
	ECTransferParams  json.RawMessage
	// Passthrough are the members a ChatCompletionRequest declares with
	// the same name, type and meaning (sampling knobs, vllm_xargs,
	// structured_outputs, chat_template_kwargs), raw in a fixed order;
	// the conversion hands them to the chat request's validation.
	Passthrough []RawMember
}

// RawMember is one member of a JSON object.
type RawMember struct {
	Key   string
	Value json.RawMessage
}

// responsesPassthrough are the ResponsesRequest members copied to the chat
// request as they are.
var responsesPassthrough = []string{
	"temperature", "top_p", "top_k", "logit_bias", "skip_special_tokens", "include_stop_str_in_output",
	"presence_penalty", "frequency_penalty", "repetition_penalty", "seed", "stop", "ignore_eos",
	"vllm_xargs", "structured_outputs", "chat_template_kwargs",
}

// ResponsesReasoning is the reasoning config (openai Reasoning).
type ResponsesReasoning struct {
	Effort *string `json:"effort"`
}

// ResponsesText is the text config; Format.Schema is the json_schema
// format's schema.
type ResponsesText struct {
	Format *ResponsesTextFormat `json:"format"`
}

// ResponsesTextFormat is text.format: "text", "json_schema" or "json_object".
type ResponsesTextFormat struct {
	Type   string          `json:"type"`
	Name   *string         `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict *bool           `json:"strict"`
}

// IncludesOutputLogprobs is ResponsesRequest.is_include_output_logprobs.
func (r *ResponsesRequest) IncludesOutputLogprobs() bool {
	for _, s := range r.Include {
		if s == "message.output_text.logprobs" {
			return true
		}
	}
	return false
}

// DecodeResponsesRequest decodes and validates a Responses body the way
// vLLM's pydantic model and its before-validators do for the members
// rendering reads.
func DecodeResponsesRequest(data []byte) (*ResponsesRequest, error) {
	var raw struct {
		Model              *string             `json:"model"`
		Input              json.RawMessage     `json:"input"`
		Instructions       *string             `json:"instructions"`
		MaxOutputTokens    *int                `json:"max_output_tokens"`
		PreviousResponseID *string             `json:"previous_response_id"`
		Prompt             json.RawMessage     `json:"prompt"`
		Background         *bool               `json:"background"`
		Store              *bool               `json:"store"`
		Reasoning          *ResponsesReasoning `json:"reasoning"`
		Stream             *bool               `json:"stream"`
		TopLogprobs        *int                `json:"top_logprobs"`
		Include            []string            `json:"include"`
		Text               *ResponsesText      `json:"text"`
		ToolChoice         json.RawMessage     `json:"tool_choice"`
		Tools              []json.RawMessage   `json:"tools"`
		Truncation         *string             `json:"truncation"`
		RequestID          *string             `json:"request_id"`
		CacheSalt          json.RawMessage     `json:"cache_salt"`
		Priority           *int64              `json:"priority"`
		KVTransferParams   json.RawMessage     `json:"kv_transfer_params"`
		Metadata           json.RawMessage     `json:"metadata"`
		User               *string             `json:"user"`
		ParallelToolCalls  *bool               `json:"parallel_tool_calls"`
		MaxToolCalls       *int                `json:"max_tool_calls"`
		ECTransferParams   json.RawMessage     `json:"ec_transfer_params"`
	}
	// The body itself (present, JSON, an object) is checked as pydantic
	// checks every request body; "input" is the one required member.
	obj, fe := decodeBody(data, "ResponsesRequest")
	if fe != nil {
		return nil, &ValidationError{Errors: []FieldError{*fe}}
	}
	if _, ok := obj.members["input"]; !ok {
		obj.missing("input")
		return nil, &ValidationError{Errors: obj.errs}
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("invalid Responses request: %w", err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, fmt.Errorf("invalid Responses request: %w", err)
	}
	r := &ResponsesRequest{
		Model: raw.Model, Instructions: raw.Instructions, MaxOutputTokens: raw.MaxOutputTokens,
		PreviousResponseID: raw.PreviousResponseID, Reasoning: raw.Reasoning,
		TopLogprobs: raw.TopLogprobs, Include: raw.Include, Text: raw.Text,
		ToolChoice: raw.ToolChoice, Tools: raw.Tools, Truncation: "disabled", RequestID: raw.RequestID,
		KVTransferParams: nullToNil(raw.KVTransferParams), ECTransferParams: nullToNil(raw.ECTransferParams),
		Metadata: nullToNil(raw.Metadata), User: raw.User, ParallelToolCalls: true, MaxToolCalls: raw.MaxToolCalls,
	}
	if raw.ParallelToolCalls != nil {
		r.ParallelToolCalls = *raw.ParallelToolCalls
	}
	for _, k := range responsesPassthrough {
		if v, ok := all[k]; ok {
			r.Passthrough = append(r.Passthrough, RawMember{k, v})
		}
	}
	// The before-validators run first, in declaration order.
	if raw.Background != nil && *raw.Background && raw.Store != nil && !*raw.Store {
		return nil, errors.New("background can only be used when `store` is true")
	}
	if p := nullToNil(raw.Prompt); p != nil {
		return nil, &ResponsesParamError{Message: "prompt template is not supported", Param: "prompt"}
	}
	if cs := nullToNil(raw.CacheSalt); cs != nil {
		var s string
		if json.Unmarshal(cs, &s) != nil || s == "" {
			//lint:ignore ST1005 vLLM's message, byte for byte
			return nil, errors.New("Parameter 'cache_salt' must be a non-empty string if provided.")
		}
		r.CacheSalt = &s
	}
	switch in := nullToNil(raw.Input); {
	case in == nil:
		return nil, &ResponsesParamError{Message: "Field required", Param: "input"}
	case in[0] == '"':
		var s string
		if err := json.Unmarshal(in, &s); err != nil {
			return nil, &ResponsesParamError{Message: "Input should be a valid string", Param: "input"}
		}
		r.InputText = &s
	case in[0] == '[':
		if err := json.Unmarshal(in, &r.InputItems); err != nil {
			return nil, &ResponsesParamError{Message: "Input should be a valid list", Param: "input"}
		}
		if r.InputItems == nil {
			r.InputItems = []json.RawMessage{}
		}
	default:
		return nil, &ResponsesParamError{Message: "Input should be a valid string or a list of items", Param: "input"}
	}
	if raw.Stream != nil {
		r.Stream = *raw.Stream
	}
	if raw.Truncation != nil {
		if *raw.Truncation != "auto" && *raw.Truncation != "disabled" {
			return nil, &ResponsesParamError{Message: "Input should be 'auto' or 'disabled'", Param: "truncation"}
		}
		r.Truncation = *raw.Truncation
	}
	if raw.Priority != nil {
		r.Priority = *raw.Priority
	}
	if r.ToolChoice = nullToNil(r.ToolChoice); r.ToolChoice == nil {
		r.ToolChoice = json.RawMessage(`"auto"`)
	}
	if err := checkResponsesToolUsage(r); err != nil {
		return nil, err
	}
	if r.TopLogprobs == nil {
		zero := 0
		r.TopLogprobs = &zero
	}
	return r, nil
}

func nullToNil(v json.RawMessage) json.RawMessage {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return nil
	}
	return v
}

// ResponsesParamError is a Responses body refused with a 400 naming the
// offending member.
type ResponsesParamError struct {
	Message string
	Param   string
	// Type is the error type vLLM names ("" for BadRequestError).
	Type string
}

func (e *ResponsesParamError) Error() string { return e.Message }

// checkResponsesToolUsage is ResponsesRequest.check_tool_usage: without
// tools, "auto" and "none" become "none" and "required" or a named
// function is refused; a named function must be among the tools.
func checkResponsesToolUsage(r *ResponsesRequest) error {
	var choice string
	isString := json.Unmarshal(r.ToolChoice, &choice) == nil
	var named struct {
		Type *string `json:"type"`
		Name *string `json:"name"`
	}
	isNamed := !isString && json.Unmarshal(r.ToolChoice, &named) == nil && named.Type != nil && *named.Type == "function"
	notFound := &ResponsesParamError{Message: "Tool choice 'function' not found in 'tools' parameter.", Param: "tool_choice"}
	if len(r.Tools) == 0 {
		switch {
		case isString && (choice == "auto" || choice == "none"):
			r.ToolChoice = json.RawMessage(`"none"`)
		case isString && choice == "required":
			return &ResponsesParamError{Message: "Tool choice 'required' must be specified with 'tools' parameter.", Param: "tool_choice"}
		case isNamed:
			return notFound
		}
		return nil
	}
	if !isNamed {
		return nil
	}
	if named.Name == nil || *named.Name == "" {
		return notFound
	}
	for _, t := range r.Tools {
		var tool struct {
			Name *string `json:"name"`
		}
		if json.Unmarshal(t, &tool) == nil && tool.Name != nil && *tool.Name == *named.Name {
			return nil
		}
	}
	return notFound
}
