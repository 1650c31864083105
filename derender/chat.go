package derender

import (
	"context"
	"encoding/json"

	"github.com/vrender/vrender/internal/telemetry"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
)

// errParserNeedsChatRequest is vLLM's 400 when a parser is configured and
// the request carries no chat_request.
func errParserNeedsChatRequest() error {
	return badRequest("chat_request is required for chat derender when a tool or reasoning parser is configured")
}

// Chat is the non-streaming chat derender: one ChatCompletionResponse for
// a complete generate response.
func (e *Engine) Chat(ctx context.Context, req *protocol.DerenderChatRequest, model string) (*protocol.ChatCompletionResponse, error) {
	gen := &req.GenerateResponse
	if err := e.checkBounds([]*protocol.GenerateResponse{gen}); err != nil {
		return nil, err
	}
	if err := checkUsageCount("prompt_tokens", req.PromptTokens); err != nil {
		return nil, err
	}
	if e.HasParser() && req.ChatRequest == nil {
		return nil, errParserNeedsChatRequest()
	}
	prompt := req.PromptTokenIDs
	if prompt == nil {
		prompt = gen.PromptTokenIDs
	}
	if len(prompt) > e.model.MaxModelLen {
		return nil, badRequest("prompt_token_ids length (%d) exceeds max_model_len (%d).", len(prompt), e.model.MaxModelLen)
	}
	res := &protocol.ChatCompletionResponse{
		ID: gen.RequestID, Object: "chat.completion", Created: e.now().Unix(), Model: model,
		Choices: []protocol.ChatCompletionChoice{}, PromptLogprobs: gen.PromptLogprobs,
		KVTransferParams: gen.KVTransferParams, Metrics: gen.Metrics,
	}
	completion := 0
	for i := range gen.Choices {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := &gen.Choices[i]
		if len(c.TokenIDs) == 0 {
			return nil, badRequest("choice %d has empty or null token_ids", c.Index)
		}
		completion += len(c.TokenIDs)
		choice, err := e.chatChoice(c, req.ChatRequest, prompt)
		if err != nil {
			return nil, err
		}
		res.Choices = append(res.Choices, choice)
	}
	pt := 0
	if req.PromptTokens != nil {
		pt = *req.PromptTokens
	}
	res.Usage = protocol.NewUsage(pt, completion)
	return res, nil
}

func (e *Engine) chatChoice(c *protocol.GenerateChoice, cr *protocol.ChatCompletionRequest, prompt []int) (protocol.ChatCompletionChoice, error) {
	out := protocol.ChatCompletionChoice{Index: c.Index, Logprobs: e.resolveLogprobs(c.Logprobs, nil),
		FinishReason: c.FinishReason, StopReason: json.RawMessage("null")}
	if !e.HasParser() || cr == nil {
		skip := cr == nil || cr.SkipSpecialTokens
		st := e.stages.Load()
		start := st.Start()
		text, err := e.model.Decode(c.TokenIDs, skip)
		st.Since(telemetry.StageDetokenize, start)
		if err != nil {
			return out, badRequest("%v", err)
		}
		out.Message = e.message(&text, nil, nil)
		return out, nil
	}
	s, err := e.newParseSetup(cr, prompt)
	if err != nil {
		return out, err
	}
	l, err := e.newLive(s)
	if err != nil {
		return out, err
	}
	var acc parsers.Accumulator
	acc.Add(l.push(s.textIDs(c.TokenIDs, c.FinishReason, e.model.Tokenizer.IsSpecial), true))
	engineFinish := ""
	if c.FinishReason != nil {
		engineFinish = *c.FinishReason
	}
	r := acc.Result(l.parser, engineFinish)
	if c.FinishReason != nil || r.FinishReason != "stop" {
		out.FinishReason = &r.FinishReason
	}
	var calls []protocol.ToolCall
	for _, tc := range r.ToolCalls {
		calls = append(calls, protocol.ToolCall{ID: l.parser.ToolCallID(tc.ID, newToolCallID), Type: "function",
			Function: protocol.FunctionCall{Name: tc.Name, Arguments: tc.Arguments}})
	}
	out.Message = e.message(r.Content, r.Reasoning, calls)
	return out, nil
}

func (e *Engine) message(content, reasoning *string, calls []protocol.ToolCall) protocol.ChatMessage {
	m := protocol.ChatMessage{Role: "assistant", Content: content, Reasoning: reasoning, ToolCalls: calls}
	if e.cfg.ReasoningFieldCompat {
		// Not json.Marshal: it HTML-escapes <>&, which Python never does.
		if reasoning == nil {
			m.ReasoningContent = json.RawMessage("null")
		} else {
			m.ReasoningContent = wire.AppendString(nil, *reasoning)
		}
	}
	return m
}
