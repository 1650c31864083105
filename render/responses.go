package render

import (
	"context"

	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
)

// RenderResponsesChat renders r, already converted to the chat request req
// (ResponsesToChat), as RenderResponses does (previous_response_id is the
// caller's to refuse). req gets the structural tag the tool parser adds;
// the served route derenders the answer with it. The result's Prompt
// carries the typed features the served route routes images by.
func (g *Generator) RenderResponsesChat(ctx context.Context, r *protocol.ResponsesRequest, req *protocol.ChatCompletionRequest) (*ChatResult, error) {
	// build_tok_params: truncation "auto" truncates the prompt to fit.
	var truncate *int
	if r.Truncation != "disabled" {
		all := -1
		truncate = &all
	}
	prompt, err := g.renderChatPrompt(ctx, req, promptLimits{r.MaxOutputTokens, "max_output_tokens", truncate}, true)
	if err != nil {
		return nil, err
	}
	maxTokens, err := MaxTokens(g.maxModelLen, r.MaxOutputTokens, len(prompt.TokenIDs), g.cfg.Defaults, truncate)
	if err != nil {
		return nil, err
	}
	if r, err = g.adjustResponsesForTools(r, req); err != nil {
		return nil, err
	}
	params, err := ResponsesSamplingParams(r, req, maxTokens, g.cfg.Defaults)
	if err != nil {
		return nil, err
	}
	id := "resp_" + protocol.RandomUUID()
	if r.RequestID != nil {
		id = *r.RequestID
	}
	res := &ChatResult{Request: newGenerateRequest("", prompt.TokenIDs, params, r.Model, r.Stream, nil, r.CacheSalt, r.Priority),
		Prompt: prompt}
	res.Request.RequestID = id
	res.Request.KVTransferParams = r.KVTransferParams
	if prompt.Features != nil {
		res.Request.SetFeatures(prompt.Features.AppendJSON(nil))
	}
	return res, nil
}

// adjustResponsesForTools is the parser's adjust_request, which vLLM's
// preprocess_chat runs on a ResponsesRequest as on a chat request: a tool
// parser with a structural tag constrains required, named (ToolChoiceFunction)
// and strict-auto tool_choice with structured_outputs.structural_tag and
// clears text. The structural tag is set on req (whose structured_outputs
// to_sampling_params reads); r is returned without text when it was
// cleared. The JSON-schema path of parsers without a structural tag is not
// applied to Responses requests.
func (g *Generator) adjustResponsesForTools(r *protocol.ResponsesRequest, req *protocol.ChatCompletionRequest) (*protocol.ResponsesRequest, error) {
	if parsers.StructuralTagModel(g.cfg.ToolCallParser) == "" || g.cfg.LegacyToolChoice || len(req.Tools) == 0 {
		return r, nil
	}
	adjusted, err := g.adjustForTools(req)
	if err != nil || adjusted == req || adjusted.StructuredOutputs == nil || adjusted.StructuredOutputs.StructuralTag == nil {
		return r, err
	}
	req.StructuredOutputs = adjusted.StructuredOutputs
	out := *r
	out.Text = nil
	return &out, nil
}

// ResponsesSamplingParams is ResponsesRequest.to_sampling_params: the
// temperature, top_p, top_k and repetition_penalty fall back to the
// model's defaults (then 1.0, 1.0, 0, 1.0), min_p and the default stop ids
// do not apply, and text.format json_schema becomes structured_outputs.json.
func ResponsesSamplingParams(r *protocol.ResponsesRequest, req *protocol.ChatCompletionRequest, maxTokens int, d SamplingDefaults) (protocol.SamplingParams, error) {
	if r.MaxOutputTokens != nil {
		maxTokens = min(*r.MaxOutputTokens, maxTokens)
	}
	so := req.StructuredOutputs
	if r.Text != nil && r.Text.Format != nil {
		if so != nil {
			return protocol.SamplingParams{}, &protocol.ResponsesParamError{
				Message: "Cannot specify both structured_outputs and text.format", Param: "structured_outputs"}
		}
		if f := r.Text.Format; f.Type == "json_schema" && len(f.Schema) > 0 && string(f.Schema) != "null" {
			so = &protocol.StructuredOutputsParams{JSON: f.Schema}
		}
	}
	var logprobs *int
	if r.IncludesOutputLogprobs() {
		logprobs = r.TopLogprobs
	}
	params, err := buildSamplingParams(samplingFields{
		PresencePenalty: req.PresencePenalty, FrequencyPenalty: req.FrequencyPenalty,
		RepetitionPenalty: req.RepetitionPenalty, Temperature: req.Temperature, TopP: req.TopP, TopK: req.TopK,
		Seed: req.Seed, Stop: req.Stop, Logprobs: logprobs, IgnoreEOS: req.IgnoreEOS,
		SkipSpecialTokens: req.SkipSpecialTokens, SpacesBetweenSpecial: true,
		IncludeStopStrInOutput: req.IncludeStopStrInOutput, Stream: r.Stream, StructuredOutputs: so,
		LogitBias: req.LogitBias, VLLMXargs: req.VLLMXargs, KVTransferParams: r.KVTransferParams,
		ECTransferParams: r.ECTransferParams,
	}, maxTokens, SamplingDefaults{
		Temperature: d.Temperature, TopP: d.TopP, TopK: d.TopK, RepetitionPenalty: d.RepetitionPenalty,
	})
	if err != nil {
		return protocol.SamplingParams{}, samplingError(err)
	}
	return params, nil
}
