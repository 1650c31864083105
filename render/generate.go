package render

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
)

// GeneratorConfig holds the server flags that shape the GenerateRequests
// built from chat and completion requests.
type GeneratorConfig struct {
	// EnableAutoToolChoice is --enable-auto-tool-choice.
	EnableAutoToolChoice bool
	// ToolCallParser is --tool-call-parser ("" when not set).
	ToolCallParser string
	// LegacyToolChoice is VLLM_ENFORCE_STRICT_TOOL_CALLING turned off: no
	// structural tags, required and named tool_choice constrained by the
	// tools' JSON schema for every parser.
	LegacyToolChoice bool
	// TrustRequestChatTemplate is --trust-request-chat-template.
	TrustRequestChatTemplate bool
	// Defaults are the sampling defaults from the generation config.
	Defaults SamplingDefaults
	// MaxPromptBytes bounds the text one prompt may give the tokenizer
	// (the rendered chat prompt, each completion prompt); <= 0: no limit.
	// vLLM has no such limit; see DefaultMaxPromptBytes.
	MaxPromptBytes int
}

// ErrPromptTooLarge is the cause (errors.Is) of the 400 for a prompt over
// GeneratorConfig.MaxPromptBytes.
var ErrPromptTooLarge = errors.New("prompt over the server's byte limit")

// DefaultMaxPromptBytes is the prompt byte limit vrender serves with unless
// told otherwise: 16 bytes per token of the context, at least 1 MiB. A
// prompt that fits the context averages 3 to 6 bytes per token (English,
// code, CJK alike); only long runs of whitespace or separators reach 16.
// The limit bounds what one request costs the tokenizer (its ids, offsets
// and the response scale with the text) at a small multiple of what any
// prompt the model can take needs.
func DefaultMaxPromptBytes(maxModelLen int) int {
	return max(16*maxModelLen, 1<<20)
}

// CheckPromptBytes refuses a prompt text longer than the configured byte
// limit, before anything tokenizes it.
func (g *Generator) CheckPromptBytes(text string) error {
	limit := g.cfg.MaxPromptBytes
	if limit <= 0 || len(text) <= limit {
		return nil
	}
	return &BadRequestError{
		Message: fmt.Sprintf("The prompt is %d bytes long, more than this server's limit of %d bytes (--max-prompt-bytes). "+
			"Please reduce the length of the input prompt.", len(text), limit),
		Param: "input_text",
		Err:   ErrPromptTooLarge,
	}
}

// Generator builds the GenerateRequest a tokens-only engine takes from a
// chat or completion request, as vLLM's ServingRender does. It is safe for
// concurrent use.
type Generator struct {
	r           *Renderer
	maxModelLen int
	cfg         GeneratorConfig
	// maxCharsPerToken is the longest vocabulary entry in characters, vLLM's
	// bound for rejecting a text before tokenizing it.
	maxCharsPerToken int
}

// NewGenerator returns a Generator rendering with r for a model whose
// context holds maxModelLen tokens.
func NewGenerator(r *Renderer, maxModelLen int, cfg GeneratorConfig) *Generator {
	g := &Generator{r: r, maxModelLen: maxModelLen, cfg: cfg}
	for id := range r.tok.Len() {
		if tok, ok := r.tok.IDToToken(id); ok {
			g.maxCharsPerToken = max(g.maxCharsPerToken, utf8.RuneCountInString(tok))
		}
	}
	return g
}

// Renderer is the renderer the generator renders with.
func (g *Generator) Renderer() *Renderer { return g.r }

// ChatResult is a rendered chat request: the GenerateRequest and the
// prompt it was built from.
type ChatResult struct {
	Request protocol.GenerateRequest
	Prompt  *ChatPrompt
}

// CheckChatRequest applies the checks vLLM makes before rendering a chat
// request: tool_choice against the configured tool parser, and a
// request-supplied chat template against --trust-request-chat-template.
func (g *Generator) CheckChatRequest(tc protocol.ToolChoice, chatTemplate *string, kwargs *wire.Node) error {
	// vLLM instantiates the tool parser only with --enable-auto-tool-choice
	// (ParserManager.get_tool_parser), so without it even "required" and
	// named choices are refused.
	if !g.cfg.EnableAutoToolChoice || g.cfg.ToolCallParser == "" {
		switch tc.Kind {
		case protocol.ToolChoiceUnset, protocol.ToolChoiceNone:
		case protocol.ToolChoiceAuto:
			if !g.cfg.EnableAutoToolChoice {
				return &BadRequestError{Message: `"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`}
			}
		case protocol.ToolChoiceRequired, protocol.ToolChoiceBadString:
			return &BadRequestError{Message: fmt.Sprintf(`tool_choice="%s" requires --tool-call-parser to be set`, tc.String())}
		default:
			return &BadRequestError{Message: fmt.Sprintf(`tool_choice=function "%s" requires --tool-call-parser to be set`, tc.Name)}
		}
	}
	if !g.cfg.TrustRequestChatTemplate && (chatTemplate != nil || kwargsHasChatTemplate(kwargs)) {
		return &BadRequestError{Message: "Chat template is passed with request, but --trust-request-chat-template is not set. " +
			"Refused request with untrusted chat template."}
	}
	return nil
}

// kwargsHasChatTemplate reports whether chat_template_kwargs carries a
// non-null "chat_template".
func kwargsHasChatTemplate(kwargs *wire.Node) bool {
	v, ok := kwargs.Get("chat_template")
	return ok && !v.IsNull()
}

// RenderChat is ServingRender.render_chat_request after the model check:
// it renders req and returns the GenerateRequest with request_id
// "chatcmpl-<uuid>".
func (g *Generator) RenderChat(ctx context.Context, req *protocol.ChatCompletionRequest) (*ChatResult, error) {
	if req.UseBeamSearch {
		return nil, &BadRequestError{Message: "Beam search is not supported by the render endpoint"}
	}
	if g.r.Harmony() {
		return g.renderHarmonyChat(ctx, req)
	}
	if err := g.CheckChatRequest(req.ToolChoice, req.ChatTemplate, req.ChatTemplateKwargs); err != nil {
		return nil, err
	}
	maxOutput, maxOutputParam := req.MaxCompletionTokens, "max_completion_tokens"
	if maxOutput == nil {
		maxOutput, maxOutputParam = req.MaxTokens, "max_tokens"
	}
	prompt, err := g.renderChatPrompt(ctx, req, PromptLimits{maxOutput, maxOutputParam, req.TruncatePromptTokens}, nil)
	if err != nil {
		return nil, err
	}
	adjusted, err := g.adjustForTools(req)
	if err != nil {
		return nil, err
	}
	return g.chatResult(req, adjusted, prompt)
}

// chatResult builds the GenerateRequest for a rendered prompt: max_tokens
// by get_max_tokens, sampling params from adjusted (req after the tool
// parser's adjust_request).
func (g *Generator) chatResult(req, adjusted *protocol.ChatCompletionRequest, prompt *ChatPrompt) (*ChatResult, error) {
	requested := req.MaxCompletionTokens
	if requested == nil {
		requested = req.MaxTokens
	}
	maxTokens, err := MaxTokens(g.maxModelLen, requested, len(prompt.TokenIDs), g.cfg.Defaults, req.TruncatePromptTokens)
	if err != nil {
		return nil, err
	}
	params, err := ChatSamplingParams(adjusted, maxTokens, g.cfg.Defaults)
	if err != nil {
		return nil, samplingError(err)
	}
	stream := req.Stream != nil && *req.Stream
	res := &ChatResult{
		Request: newGenerateRequest("chatcmpl-", prompt.TokenIDs, params, req.Model, stream, req.StreamOptions,
			req.CacheSalt, req.Priority),
		Prompt: prompt,
	}
	if prompt.Features != nil {
		res.Request.SetFeatures(prompt.Features)
	}
	return res, nil
}

// renderHarmonyChat is render_chat_request on vLLM's gpt-oss path: no
// tool_choice check against the tool parser (Harmony always parses tools),
// no chat template trust check, no tokenize-time length checks and no
// adjust_request: required and named tool_choice add no structured output.
// max_tokens is get_max_tokens over the Harmony prompt.
func (g *Generator) renderHarmonyChat(ctx context.Context, req *protocol.ChatCompletionRequest) (*ChatResult, error) {
	prompt, err := g.r.RenderHarmony(ctx, ChatInput{
		Messages:        req.Messages,
		Tools:           req.Tools,
		ToolChoice:      req.ToolChoice,
		ReasoningEffort: req.ReasoningEffort,
		// vLLM's Harmony path has no length check before the engine; the
		// byte limit is vrender's own memory bound and holds here too.
		CheckText: g.CheckPromptBytes,
	})
	if err != nil {
		return nil, err
	}
	return g.chatResult(req, req, prompt)
}

// PromptLimits are the members of a request its TokenizeParams are built
// from: the output tokens it reserves (and the member naming them in
// errors) and its truncate_prompt_tokens.
type PromptLimits struct {
	MaxOutput      *int
	MaxOutputParam string
	Truncate       *int
}

// renderChatPrompt applies the chat template to req and tokenizes it with
// the length checks of lim; toolDicts, when not nil, are the template's
// tools instead of req.Tools' ChatCompletionToolsParam dumps.
func (g *Generator) renderChatPrompt(ctx context.Context, req *protocol.ChatCompletionRequest, lim PromptLimits, toolDicts []*wire.Node) (*ChatPrompt, error) {
	limits, err := g.tokenLimits(lim.MaxOutput, lim.MaxOutputParam, lim.Truncate)
	if err != nil {
		return nil, err
	}
	side := ""
	if req.TruncationSide != nil {
		side = *req.TruncationSide
	}
	prompt, err := g.r.RenderChat(ctx, ChatInput{
		Messages:             req.Messages,
		Tools:                req.Tools,
		ToolChoice:           req.ToolChoice,
		Documents:            req.Documents,
		ChatTemplate:         req.ChatTemplate,
		ChatTemplateKwargs:   req.ChatTemplateKwargs,
		ReasoningEffort:      req.ReasoningEffort,
		AddGenerationPrompt:  req.AddGenerationPrompt,
		ContinueFinalMessage: req.ContinueFinalMessage,
		AddSpecialTokens:     req.AddSpecialTokens,
		TruncatePromptTokens: limits.truncate,
		TruncationSide:       side,
		ToolDicts:            toolDicts,
		MMProcessorKwargs:    req.MMProcessorKwargs,
		MediaIOKwargs:        req.MediaIOKwargs,
		OmitMMKwargs:         !req.ReturnMMKwargs,
		CheckText: func(text string) error {
			// vLLM's character bound first: where both refuse, vLLM's
			// error is the one a client expects.
			if err := limits.checkText(text); err != nil {
				return err
			}
			return g.CheckPromptBytes(text)
		},
	})
	if err != nil {
		return nil, err
	}
	if err := limits.check(prompt.TokenIDs, true); err != nil {
		return nil, err
	}
	if len(prompt.TokenIDs) == 0 {
		return nil, &BadRequestError{Message: "No token_ids rendered"}
	}
	return prompt, nil
}

// adjustForTools is the parser's adjust_request as preprocess_chat runs
// it (vllm/parser/abstract_parser.py): a tool parser with a structural tag
// model gets structured_outputs.structural_tag (response_format cleared)
// for required, named, and auto with a strict tool; otherwise required and
// named tool_choice are constrained by get_json_schema_from_tools, unless
// the request already carries a structural tag. req is not modified.
func (g *Generator) adjustForTools(req *protocol.ChatCompletionRequest) (*protocol.ChatCompletionRequest, error) {
	if g.cfg.ToolCallParser == "" || !g.cfg.EnableAutoToolChoice || len(req.Tools) == 0 {
		return req, nil
	}
	if model := parsers.StructuralTagModel(g.cfg.ToolCallParser); model != "" && !g.cfg.LegacyToolChoice {
		tag, ok, err := structuralTagFor(model, req)
		if err != nil || !ok {
			return req, err
		}
		out := *req
		out.StructuredOutputs = &protocol.StructuredOutputsParams{StructuralTag: &tag}
		out.ResponseFormat = nil
		return &out, nil
	}
	if req.StructuredOutputs != nil && req.StructuredOutputs.StructuralTag != nil {
		return req, nil
	}
	schema, err := toolChoiceSchema(req)
	if err != nil || schema == nil {
		return req, err
	}
	out := *req
	out.StructuredOutputs = &protocol.StructuredOutputsParams{JSON: schema}
	out.ResponseFormat = nil
	return &out, nil
}

// RenderCompletion is ServingRender.render_completion_request after the
// model check: one GenerateRequest per prompt, each with request_id
// "cmpl-<uuid>".
func (g *Generator) RenderCompletion(ctx context.Context, req *protocol.CompletionRequest) ([]protocol.GenerateRequest, error) {
	if req.Suffix != nil {
		return nil, &BadRequestError{Message: "suffix is not currently supported"}
	}
	if req.HasPromptEmbeds {
		return nil, &BadRequestError{Message: "You must set `--enable-prompt-embeds` to input `prompt_embeds`.", Param: "prompt_embeds"}
	}
	maxOutput := req.MaxTokens
	limits, err := g.tokenLimits(maxOutput, "max_tokens", req.TruncatePromptTokens)
	if err != nil {
		return nil, err
	}
	side := ""
	if req.TruncationSide != nil {
		side = *req.TruncationSide
	}
	prompts := make([][]int, 0, len(req.Prompts))
	for _, p := range req.Prompts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var ids []int
		if p.Text != nil {
			if err := limits.checkText(*p.Text); err != nil {
				return nil, err
			}
			if err := g.CheckPromptBytes(*p.Text); err != nil {
				return nil, err
			}
			if ids, err = g.r.TokenizePrompt(*p.Text, req.AddSpecialTokens, limits.truncate, side); err != nil {
				return nil, err
			}
		} else {
			ids = truncateTokens(p.TokenIDs, limits.truncate, side)
		}
		if err := limits.check(ids, p.Text != nil); err != nil {
			return nil, err
		}
		prompts = append(prompts, ids)
	}
	out := make([]protocol.GenerateRequest, 0, len(prompts))
	stream := req.Stream != nil && *req.Stream
	for _, ids := range prompts {
		if len(ids) == 0 {
			return nil, &BadRequestError{Message: "No token_ids rendered"}
		}
		maxTokens, err := MaxTokens(g.maxModelLen, req.MaxTokens, len(ids), g.cfg.Defaults, req.TruncatePromptTokens)
		if err != nil {
			return nil, err
		}
		params, err := CompletionSamplingParams(req, maxTokens, g.cfg.Defaults)
		if err != nil {
			return nil, samplingError(err)
		}
		out = append(out, newGenerateRequest("cmpl-", ids, params, req.Model, stream, req.StreamOptions,
			req.CacheSalt, req.Priority))
	}
	return out, nil
}

func newGenerateRequest(prefix string, ids []int, params protocol.SamplingParams, model *string, stream bool,
	opts *protocol.StreamOptions, cacheSalt *string, priority int64) protocol.GenerateRequest {
	if !stream {
		opts = nil
	} else if opts != nil {
		o := *opts
		opts = &o
	}
	return protocol.GenerateRequest{
		RequestID:      prefix + protocol.RandomUUID(),
		TokenIDs:       ids,
		SamplingParams: params,
		Model:          model,
		OutputMode:     protocol.OutputModeTokens,
		Stream:         &stream,
		StreamOptions:  opts,
		CacheSalt:      cacheSalt,
		Priority:       priority,
	}
}

// samplingError maps a SamplingParams construction failure to a 400:
// vLLM's exception handler answers ValueError and VLLMValidationError with
// str(exc) and, for the latter, its parameter.
func samplingError(err error) error {
	if spe, ok := err.(*protocol.SamplingParamsError); ok {
		e := &BadRequestError{Message: spe.Error(), Err: err}
		if spe.Parameter != nil {
			e.Param = *spe.Parameter
		}
		return e
	}
	return err
}

// tokenLimits is vLLM's TokenizeParams for a render request: the context
// length, the output tokens the request reserves, and the resolved
// truncation.
type tokenLimits struct {
	maxTotal         int
	maxOutput        int
	truncate         *int // resolved: -1 replaced by the input budget
	maxCharsPerToken int
}

func (l tokenLimits) maxInput() int { return l.maxTotal - l.maxOutput }

// tokenLimits builds the limits and applies TokenizeParams.__post_init__'s
// checks, with vLLM's messages.
func (g *Generator) tokenLimits(maxOutput *int, maxOutputParam string, truncate *int) (tokenLimits, error) {
	l := tokenLimits{maxTotal: g.maxModelLen, maxCharsPerToken: g.maxCharsPerToken}
	if maxOutput != nil {
		l.maxOutput = *maxOutput
	}
	if l.maxOutput > l.maxTotal {
		return l, &BadRequestError{
			Message: fmt.Sprintf("%s=%d cannot be greater than max_model_len=max_total_tokens=%d. Please request fewer output tokens. (parameter=%s, value=%d)",
				maxOutputParam, l.maxOutput, l.maxTotal, maxOutputParam, l.maxOutput),
			Param: maxOutputParam,
		}
	}
	if truncate != nil {
		t := *truncate
		if t > l.maxInput() {
			return l, &BadRequestError{
				Message: fmt.Sprintf("truncate_prompt_tokens=%d cannot be greater than max_model_len - %s = %d. Please request a smaller truncation size. (parameter=truncate_prompt_tokens, value=%d)",
					t, maxOutputParam, l.maxInput(), t),
				Param: "truncate_prompt_tokens",
			}
		}
		if t < 0 {
			t = l.maxInput()
		}
		l.truncate = &t
	}
	return l, nil
}

// checkText is TokenizeParams._text_len_check: without truncation, a
// text longer than the input budget times the longest token cannot fit.
// (With truncation vLLM trims such a text to that many characters before
// tokenizing; the tokens kept are the same unless a token straddles the cut,
// which vrender does not reproduce.)
func (l tokenLimits) checkText(text string) error {
	maxChars := l.maxInput() * l.maxCharsPerToken
	if l.truncate != nil || l.maxCharsPerToken == 0 {
		return nil
	}
	if len(text) <= maxChars {
		return nil // a text has no more characters than bytes: no need to count them
	}
	if n := utf8.RuneCountInString(text); n > maxChars {
		return &BadRequestError{
			Message: fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d output tokens "+
				"and your prompt contains %d characters (more than %d characters, which is the upper bound for %d input tokens). "+
				"Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_text, value=%d)",
				l.maxTotal, l.maxOutput, n, maxChars, l.maxInput(), n),
			Param: "input_text",
		}
	}
	return nil
}

// check is TokenizeParams._token_len_check. A text prompt is encoded with
// truncation to one token past the budget, so its count is reported as "at
// least" that many; token prompts report their real length.
func (l tokenLimits) check(ids []int, fromText bool) error {
	maxInput := l.maxInput()
	if len(ids) <= maxInput {
		return nil
	}
	count := len(ids)
	if fromText && l.truncate == nil {
		count = maxInput + 1
	}
	qualifier := ""
	if count == maxInput+1 {
		qualifier = "at least "
	}
	return &BadRequestError{
		Message: fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d output tokens "+
			"and your prompt contains %s%d input tokens, for a total of %s%d tokens. Please reduce the length of the "+
			"input prompt or the number of requested output tokens. (parameter=input_tokens, value=%d)",
			l.maxTotal, l.maxOutput, qualifier, count, qualifier, count+l.maxOutput, count),
		Param: "input_tokens",
	}
}

// truncateTokens is _token_truncation for a token prompt: keep *limit
// tokens from the given side (left by default, vLLM's tokenizer default).
func truncateTokens(ids []int, limit *int, side string) []int {
	if limit == nil || *limit >= len(ids) {
		return ids
	}
	if side == "right" {
		return ids[:*limit]
	}
	return ids[len(ids)-*limit:]
}
