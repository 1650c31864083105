package responses

import (
	"net/http"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
)

// Request is the body of POST /v1/responses/render: the members of
// vLLM's ResponsesRequest (vllm/entrypoints/openai/responses/protocol.py)
// that rendering reads, typed as the conversion to chat and the response
// object read them; values that stay JSON are the body's own trees.
type Request struct {
	Model *string
	// Input is a string (InputText) or a list of items (InputItems).
	InputText          *string
	InputItems         []InputItem
	Instructions       *string
	MaxOutputTokens    *int
	PreviousResponseID *string
	Reasoning          *Reasoning
	Stream             bool
	TopLogprobs        *int
	Include            []string
	Text               *Text
	// ToolChoice is tool_choice in the chat request's terms: "auto" when
	// absent, "none" for an absent or "auto" one without tools, a named
	// function named, other objects ToolChoiceOther.
	ToolChoice protocol.ToolChoice
	// ToolChoiceEcho is tool_choice as the response object echoes it: as
	// sent, with the same defaults as ToolChoice.
	ToolChoiceEcho   *wire.Node
	Tools            []*wire.Node // the tools' trees, decoded with the body
	Truncation       string
	RequestID        *string
	CacheSalt        *string
	Priority         int64
	KVTransferParams *wire.Node // an object, or nil
	// Metadata, User, ParallelToolCalls and MaxToolCalls are only echoed
	// in the served response object.
	Metadata          *wire.Node // nil when absent or null
	User              *string
	ParallelToolCalls bool // default true
	MaxToolCalls      *int
	ECTransferParams  *wire.Node // an object, or nil
	// Passthrough are the members a ChatCompletionRequest declares with
	// the same name, type and meaning (sampling knobs, vllm_xargs,
	// structured_outputs, chat_template_kwargs), in a fixed order; the
	// conversion hands them to the chat request's validation.
	Passthrough []protocol.Member
}

// responsesPassthrough are the ResponsesRequest members copied to the chat
// request as they are.
var responsesPassthrough = []string{
	"temperature", "top_p", "top_k", "logit_bias", "skip_special_tokens", "include_stop_str_in_output",
	"presence_penalty", "frequency_penalty", "repetition_penalty", "seed", "stop", "ignore_eos",
	"vllm_xargs", "structured_outputs", "chat_template_kwargs",
}

// Reasoning is the reasoning config (openai Reasoning).
type Reasoning struct {
	Effort *string
}

// Text is the text config; Format.Schema is the json_schema format's
// schema.
type Text struct {
	Format *TextFormat
}

// TextFormat is text.format: "text", "json_schema" or "json_object".
type TextFormat struct {
	Type   string
	Name   *string
	Schema *wire.Node // nil when absent
	Strict *bool
}

// IncludesOutputLogprobs is ResponsesRequest.is_include_output_logprobs.
func (r *Request) IncludesOutputLogprobs() bool {
	for _, s := range r.Include {
		if s == "message.output_text.logprobs" {
			return true
		}
	}
	return false
}

// DecodeRequest decodes and validates a Responses body as vLLM's
// pydantic model does: its before-validators in pydantic's order (the
// first to raise is the one error), then every member rendering or the
// response reads, typed as vLLM and OpenAI's types declare it, each
// failure reported in pydantic's words. The sampling members shared with
// chat are validated here too, in their place, then handed on as trees
// (Passthrough) to the chat request that reads them.
func DecodeRequest(data []byte) (*Request, error) {
	obj, fe := decodeBody(data, "ResponsesRequest")
	if fe != nil {
		return nil, &pylax.ValidationError{Errors: []pylax.FieldError{*fe}}
	}
	if fe := responsesModelValidators(obj); fe != nil {
		return nil, &pylax.ValidationError{Errors: []pylax.FieldError{*fe}}
	}
	r := &Request{Truncation: "disabled", ParallelToolCalls: true}
	// Declaration order: pydantic reports the errors in it.
	obj.responsesMembers(r)
	obj.samplingMembers(r)
	if len(obj.Errs) > 0 {
		return nil, &pylax.ValidationError{Errors: obj.Errs, Omitted: obj.Omitted}
	}
	for _, k := range responsesPassthrough {
		if v, ok := obj.Nodes[k]; ok {
			r.Passthrough = append(r.Passthrough, protocol.Member{Key: k, Value: v})
		}
	}
	if sent := obj.Nodes["tool_choice"]; !sent.IsNull() && len(r.Tools) == 0 {
		// check_tool_usage turned "auto" into "none" before validation.
		if r.ToolChoice.Kind == protocol.ToolChoiceAuto {
			r.ToolChoice, r.ToolChoiceEcho = protocol.ToolChoice{Kind: protocol.ToolChoiceNone}, stringNode("none")
		}
	} else if sent == nil && len(r.Tools) == 0 {
		r.ToolChoice, r.ToolChoiceEcho = protocol.ToolChoice{Kind: protocol.ToolChoiceNone}, stringNode("none")
	}
	return r, nil
}

// responsesMembers reads the members from background to tools, the ones
// ResponsesRequest declares before its sampling members.
func (obj *object) responsesMembers(r *Request) {
	obj.OptionalBool("background", false)
	if obj.validateNode("include", responsesInclude) {
		if inc := obj.Nodes["include"]; !inc.IsNull() {
			r.Include = make([]string, len(inc.Arr))
			for i, v := range inc.Arr {
				r.Include[i] = v.S
			}
		}
	}
	obj.responsesInput(r)
	r.Instructions = obj.OptionalString("instructions")
	r.MaxOutputTokens = obj.OptionalInt("max_output_tokens", nil, nil, nil)
	r.MaxToolCalls = obj.OptionalInt("max_tool_calls", nil, nil, nil)
	if obj.validateNode("metadata", nullable(openaiType("Metadata"))) {
		if m := obj.Nodes["metadata"]; !m.IsNull() {
			r.Metadata = m
		}
	}
	r.Model = obj.OptionalString("model")
	protocol.LogitBiasField(obj.Object, "logit_bias")
	if p := obj.OptionalBool("parallel_tool_calls", true); p != nil {
		r.ParallelToolCalls = *p
	}
	r.PreviousResponseID = obj.OptionalString("previous_response_id")
	if obj.validateNode("reasoning", nullable(openaiType("Reasoning"))) {
		r.Reasoning = reasoningOfNode(obj.Nodes["reasoning"])
	}
	obj.Bool("include_reasoning", true)
	obj.validateNode("service_tier", responsesServiceTier)
	obj.OptionalBool("store", true)
	if s := obj.OptionalBool("stream", false); s != nil {
		r.Stream = *s
	}
	obj.OptionalFloat("temperature", nil)
	if obj.validateNode("text", nullable(openaiType("ResponseTextConfig"))) {
		r.Text = textOfNode(obj.Nodes["text"])
	}
	r.ToolChoice, r.ToolChoiceEcho = protocol.ToolChoice{Kind: protocol.ToolChoiceAuto}, stringNode("auto")
	if n, ok := obj.Nodes["tool_choice"]; ok && obj.validateNode("tool_choice", openaiType("ToolChoice")) {
		r.ToolChoice, r.ToolChoiceEcho = protocol.ResponsesToolChoice(n), n
	}
	if obj.validateNode("tools", toolsSchema()) {
		r.Tools = obj.Trees("tools")
	}
}

// samplingMembers reads the members from top_logprobs on: sampling knobs
// and vLLM's extensions.
func (obj *object) samplingMembers(r *Request) {
	r.TopLogprobs = obj.OptionalInt("top_logprobs", new(0), nil, nil)
	obj.OptionalFloat("top_p", nil)
	obj.OptionalInt("top_k", nil, nil, nil)
	if t := obj.OptionalLiteral("truncation", "auto", "disabled"); t != nil {
		r.Truncation = *t
	}
	r.User = obj.OptionalString("user")
	obj.Bool("skip_special_tokens", true)
	obj.Bool("include_stop_str_in_output", false)
	obj.penalty("presence_penalty")
	obj.penalty("frequency_penalty")
	obj.OptionalString("prompt_cache_key")
	if _, ok := obj.Nodes["request_id"]; ok {
		id := obj.RequiredString("request_id")
		r.RequestID = &id
	}
	obj.OptionalDictOfDicts("media_io_kwargs")
	obj.OptionalDict("mm_processor_kwargs")
	r.Priority = obj.Int64("priority", 0)
	r.CacheSalt = obj.OptionalString("cache_salt")
	obj.Bool("enable_response_messages", false)
	protocol.StructuredOutputsField(obj.Object, "structured_outputs")
	obj.OptionalFloat("repetition_penalty", nil)
	obj.OptionalInt64("seed")
	obj.StopField("stop")
	obj.Bool("ignore_eos", false)
	protocol.VLLMXargsField(obj.Object, "vllm_xargs")
	r.KVTransferParams = obj.OptionalDictNode("kv_transfer_params")
	r.ECTransferParams = obj.OptionalDictNode("ec_transfer_params")
	obj.OptionalDict("chat_template_kwargs")
}

// reasoningOfNode reads a validated reasoning member (nil when absent or
// null).
func reasoningOfNode(n *wire.Node) *Reasoning {
	if n.IsNull() {
		return nil
	}
	r := &Reasoning{}
	if e, _ := n.Get("effort"); e != nil && e.Kind == wire.String {
		r.Effort = &e.S
	}
	return r
}

// textOfNode reads a validated text member (nil when absent or null).
func textOfNode(n *wire.Node) *Text {
	if n.IsNull() {
		return nil
	}
	t := &Text{}
	f, _ := n.Get("format")
	if f.IsNull() {
		return t
	}
	t.Format = &TextFormat{}
	if typ, _ := f.Get("type"); typ != nil {
		t.Format.Type = typ.S
	}
	if name, _ := f.Get("name"); name != nil && name.Kind == wire.String {
		t.Format.Name = &name.S
	}
	if schema, ok := f.Get("schema"); ok {
		t.Format.Schema = schema
	}
	if strict, _ := f.Get("strict"); strict != nil && strict.Kind == wire.Bool {
		t.Format.Strict = &strict.B
	}
	return t
}

// ParamError is a Responses body refused with a 400 naming the
// offending member.
type ParamError struct {
	Message string
	Param   string
	// Type is the error type vLLM names ("" for BadRequestError).
	Type string
}

func (e *ParamError) Error() string { return e.Message }

// object is a Responses body under validation: pylax's reader, with the
// schema walk over openai's types and the Responses validators as methods.
type object struct{ *pylax.Object }

// decodeBody is pylax.DecodeBody for the Responses model.
func decodeBody(data []byte, className string) (*object, *pylax.FieldError) {
	o, fe := pylax.DecodeBody(data, className)
	if fe != nil {
		return nil, fe
	}
	return &object{o}, nil
}

// Response is the 400 the error answers with.
func (e *ParamError) Response() protocol.ErrorResponse {
	typ := protocol.ErrorTypeBadRequest
	if e.Type != "" {
		typ = e.Type
	}
	var param *string
	if e.Param != "" {
		p := e.Param
		param = &p
	}
	return protocol.NewErrorResponse(http.StatusBadRequest, typ, e.Message, param)
}
