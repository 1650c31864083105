package anthropic

import (
	"context"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
)

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
	r.ChatTemplateArgs = obj.OptionalDictNode("chat_template_kwargs")
	if len(obj.Errs) > 0 {
		return nil, &pylax.ValidationError{Errors: obj.Errs}
	}
	return r, nil
}

// CountTokens answers a count_tokens request, converted to its chat
// request, as vLLM's AnthropicServingMessages.count_tokens does: the chat
// request rendered, the answer the prompt's token count.
func CountTokens(ctx context.Context, g *render.Generator, req *protocol.ChatCompletionRequest) (int, protocol.Appender, error) {
	res, err := g.RenderChat(ctx, req)
	if err != nil {
		return 0, nil, err
	}
	n := len(res.Request.TokenIDs)
	return n, protocol.RawJSON(AppendCountTokens(nil, n)), nil
}
