package responses

import (
	"context"
	"encoding/json"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
)

// renderChat renders r, already converted to the chat request req
// (ToChat), as Render does (previous_response_id is the caller's to
// refuse). req gets the structural tag the tool parser adds; the served
// route derenders the answer with it. The result's Prompt carries the
// typed features the served route routes images by.
func renderChat(ctx context.Context, g *render.Generator, r *Request, req *protocol.ChatCompletionRequest) (*render.ChatResult, error) {
	// build_tok_params: truncation "auto" truncates the prompt to fit.
	var truncate *int
	if r.Truncation != "disabled" {
		all := -1
		truncate = &all
	}
	prompt, maxTokens, err := g.RenderConverted(ctx, req, toolDicts(req.Tools), render.PromptLimits{
		MaxOutput: r.MaxOutputTokens, MaxOutputParam: "max_output_tokens", Truncate: truncate})
	if err != nil {
		return nil, err
	}
	if r, err = adjustForTools(g, r, req); err != nil {
		return nil, err
	}
	params, err := SamplingParams(r, req, maxTokens, g.SamplingDefaults())
	if err != nil {
		return nil, err
	}
	id := "resp_" + protocol.RandomUUID()
	if r.RequestID != nil {
		id = *r.RequestID
	}
	stream := r.Stream
	res := &render.ChatResult{Prompt: prompt, Request: protocol.GenerateRequest{
		RequestID:        id,
		TokenIDs:         prompt.TokenIDs,
		SamplingParams:   params,
		Model:            r.Model,
		OutputMode:       protocol.OutputModeTokens,
		Stream:           &stream,
		CacheSalt:        r.CacheSalt,
		Priority:         r.Priority,
		KVTransferParams: rawOf(r.KVTransferParams),
	}}
	if prompt.Features != nil {
		res.Request.SetFeatures(prompt.Features)
	}
	return res, nil
}

// adjustForTools is the parser's adjust_request, which vLLM's
// preprocess_chat runs on a ResponsesRequest as on a chat request: a tool
// parser with a structural tag constrains required, named (ToolChoiceFunction)
// and strict-auto tool_choice with structured_outputs.structural_tag and
// clears text. The structural tag is set on req (whose structured_outputs
// to_sampling_params reads); r is returned without text when it was
// cleared. The JSON-schema path of parsers without a structural tag is not
// applied to Responses requests.
func adjustForTools(g *render.Generator, r *Request, req *protocol.ChatCompletionRequest) (*Request, error) {
	so, err := g.ToolStructuralTag(req)
	if err != nil || so == nil {
		return r, err
	}
	req.StructuredOutputs = so
	out := *r
	out.Text = nil
	return &out, nil
}

// SamplingParams is ResponsesRequest.to_sampling_params: the
// temperature, top_p, top_k and repetition_penalty fall back to the
// model's defaults (then 1.0, 1.0, 0, 1.0), min_p and the default stop ids
// do not apply, and text.format json_schema becomes structured_outputs.json.
func SamplingParams(r *Request, req *protocol.ChatCompletionRequest, maxTokens int, d render.SamplingDefaults) (protocol.SamplingParams, error) {
	if r.MaxOutputTokens != nil {
		maxTokens = min(*r.MaxOutputTokens, maxTokens)
	}
	so := req.StructuredOutputs
	if r.Text != nil && r.Text.Format != nil {
		if so != nil {
			return protocol.SamplingParams{}, &ParamError{
				Message: "Cannot specify both structured_outputs and text.format", Param: "structured_outputs"}
		}
		if f := r.Text.Format; f.Type == "json_schema" && !f.Schema.IsNull() {
			so = &protocol.StructuredOutputsParams{JSON: f.Schema}
		}
	}
	var logprobs *int
	if r.IncludesOutputLogprobs() {
		logprobs = r.TopLogprobs
	}
	return render.SamplingParams(render.SamplingFields{
		PresencePenalty: req.PresencePenalty, FrequencyPenalty: req.FrequencyPenalty,
		RepetitionPenalty: req.RepetitionPenalty, Temperature: req.Temperature, TopP: req.TopP, TopK: req.TopK,
		Seed: req.Seed, Stop: req.Stop, Logprobs: logprobs, IgnoreEOS: req.IgnoreEOS,
		SkipSpecialTokens: req.SkipSpecialTokens, SpacesBetweenSpecial: true,
		IncludeStopStrInOutput: req.IncludeStopStrInOutput, Stream: r.Stream, StructuredOutputs: so,
		LogitBias: req.LogitBias, VLLMXargs: req.VLLMXargs, KVTransferParams: r.KVTransferParams,
		ECTransferParams: r.ECTransferParams,
	}, maxTokens, render.SamplingDefaults{
		Temperature: d.Temperature, TopP: d.TopP, TopK: d.TopK, RepetitionPenalty: d.RepetitionPenalty,
	})
}

// rawOf is n's JSON text, nil for no value.
func rawOf(n *wire.Node) json.RawMessage {
	if n == nil {
		return nil
	}
	return n.Raw
}
