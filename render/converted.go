package render

import (
	"context"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
)

// A front end whose API is not chat completions (Responses) converts its
// request to a chat request and renders it here, keeping its own output
// limit, truncation and sampling members: the hooks below are what vLLM's
// serving classes share with the chat path, without render knowing the API.

// RenderConverted renders req, the chat request a front end converted its
// own request to, within lim, the template getting toolDicts (the API's
// own tool dumps; nil: None) as its tools. maxTokens is the output tokens
// left (get_max_tokens over lim.MaxOutput and the model's defaults).
func (g *Generator) RenderConverted(ctx context.Context, req *protocol.ChatCompletionRequest, toolDicts []*wire.Node, lim PromptLimits) (prompt *ChatPrompt, maxTokens int, err error) {
	prompt, err = g.renderChatPrompt(ctx, req, lim, toolDicts)
	if err != nil {
		return nil, 0, err
	}
	maxTokens, err = MaxTokens(g.maxModelLen, lim.MaxOutput, len(prompt.TokenIDs), g.cfg.Defaults, lim.Truncate)
	if err != nil {
		return nil, 0, err
	}
	return prompt, maxTokens, nil
}

// ToolStructuralTag is the structured_outputs the tool parser's
// adjust_request sets on req when the parser has a structural tag model
// (required, named and strict-auto tool_choice), nil otherwise. The
// JSON-schema path of parsers without a structural tag is the chat
// route's alone.
func (g *Generator) ToolStructuralTag(req *protocol.ChatCompletionRequest) (*protocol.StructuredOutputsParams, error) {
	if parsers.StructuralTagModel(g.cfg.ToolCallParser) == "" || g.cfg.LegacyToolChoice || len(req.Tools) == 0 {
		return nil, nil
	}
	adjusted, err := g.adjustForTools(req)
	if err != nil || adjusted == req || adjusted.StructuredOutputs == nil || adjusted.StructuredOutputs.StructuralTag == nil {
		return nil, err
	}
	return adjusted.StructuredOutputs, nil
}

// SamplingDefaults are the model's sampling defaults (generation config).
func (g *Generator) SamplingDefaults() SamplingDefaults { return g.cfg.Defaults }

// SamplingParams is to_sampling_params over f, for a front end that fills
// SamplingFields from its own request; a refusal is the 400 the chat
// render route gives.
func SamplingParams(f SamplingFields, maxTokens int, d SamplingDefaults) (protocol.SamplingParams, error) {
	p, err := buildSamplingParams(f, maxTokens, d)
	if err != nil {
		return protocol.SamplingParams{}, samplingError(err)
	}
	return p, nil
}
