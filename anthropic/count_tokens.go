package anthropic

import "github.com/vrender/vrender/internal/pylax"

// DecodeCountTokensRequest validates a POST /v1/messages/count_tokens
// body as vLLM's AnthropicCountTokensRequest (vllm/entrypoints/anthropic/
// protocol.py): model (non-empty), messages, system, tool_choice, tools and
// chat_template_kwargs, validated as the Messages request validates them;
// other members (max_tokens, sampling knobs, stream) are ignored, as pydantic
// ignores members a model does not declare. The result is a Messages request
// with only those members set.
func DecodeCountTokensRequest(data []byte) (*MessagesRequest, error) {
	obj, fe := decodeBody(data, "AnthropicCountTokensRequest")
	if fe != nil {
		return nil, &pylax.ValidationError{Errors: []pylax.FieldError{*fe}}
	}
	r := &MessagesRequest{}
	obj.anthropicModelMessages(r)
	obj.anthropicSystem(r)
	obj.anthropicTools(r)
	r.ChatTemplateArgs = obj.OptionalDict("chat_template_kwargs")
	if len(obj.Errs) > 0 {
		return nil, &pylax.ValidationError{Errors: obj.Errs}
	}
	return r, nil
}
