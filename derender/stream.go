package derender

import (
	"context"
	"encoding/json"

	"github.com/vrender/vrender/internal/telemetry"
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/tokenizer"
)

// ChatStream derenders one generate stream event with vLLM's stream_state
// protocol: the client sends every event (finish-only and usage-only ones
// too) with the state the previous call returned, one state per choice.
// The engine never modifies req.ChatRequest, and the caller must not
// either while a stream that used it may continue: a live state remembers
// the request it was last checked against.
func (e *Engine) ChatStream(ctx context.Context, req *protocol.DerenderChatStreamRequest, model string) (*protocol.DerenderChatStreamResponse, error) {
	chunk := &req.GenerateChunk
	if len(chunk.Choices) > 1 {
		return nil, badRequest("derender_chat_stream expects at most one choice per chunk")
	}
	if err := e.checkStreamChunk(chunk); err != nil {
		return nil, err
	}
	if err := checkUsageCount("prompt_tokens", req.PromptTokens); err != nil {
		return nil, err
	}
	a := new(streamAnswer)
	res := &a.res
	// The state is worked on where the answer carries it.
	state := &res.StreamState
	if req.StreamState != nil {
		*state = *req.StreamState
	}
	res.Chunk = protocol.ChatCompletionStreamResponse{
		ID: chunk.RequestID, Object: "chat.completion.chunk", Created: e.now().Unix(), Model: model,
		Choices: a.choices[:0], Usage: streamUsage(chunk.Usage, req.PromptTokens), Metrics: chunk.Metrics,
	}
	var err error
	if e.HasParser() {
		err = e.chatStreamParsed(ctx, req, state, a)
	} else {
		err = e.chatStreamPlain(req, state, a)
	}
	if err != nil {
		return nil, err
	}
	normalizeStateInPlace(state)
	return res, nil
}

// streamAnswer is a streaming call's response with room for what it
// usually holds, so that one allocation serves a one-choice chunk and its
// delta: a one-token call is cheap enough that each allocation shows. It
// is kept within 512 bytes, an allocation size class.
type streamAnswer struct {
	res     protocol.DerenderChatStreamResponse
	choices [1]protocol.ChatStreamChoice
	delta   deltaStore
}

// stopReasonNull is every stream choice's stop_reason: vLLM's derender
// never sets one. Shared by all answers; nothing writes into it.
var stopReasonNull = json.RawMessage("null")

// deltaStore holds the strings a delta message usually points to.
type deltaStore struct {
	content, reasoning string
	calls              [1]protocol.ToolCallDelta
	args               [1]string
}

// checkStreamChunk applies the bounds of a non-streaming response to one
// event.
func (e *Engine) checkStreamChunk(chunk *protocol.GenerateResponse) error {
	return e.checkBounds([]*protocol.GenerateResponse{chunk})
}

func streamUsage(u *protocol.GenerateUsage, promptTokens *int) *protocol.UsageInfo {
	if u == nil {
		return nil
	}
	pt, ct := 0, 0
	if promptTokens != nil {
		pt = *promptTokens
	} else if u.PromptTokens != nil {
		pt = *u.PromptTokens
	}
	if u.CompletionTokens != nil {
		ct = *u.CompletionTokens
	}
	return protocol.NewUsage(pt, ct)
}

// normalizeState writes empty lists as [] rather than null, as vLLM does.
func normalizeState(s protocol.DerenderStreamState) protocol.DerenderStreamState {
	normalizeStateInPlace(&s)
	return s
}

func normalizeStateInPlace(s *protocol.DerenderStreamState) {
	if s.PrevTokens == nil {
		s.PrevTokens = []string{}
	}
	if s.LogprobContextTokenIDs == nil {
		s.LogprobContextTokenIDs = []int{}
	}
	if s.OutputTokenIDs == nil {
		s.OutputTokenIDs = []int{}
	}
	if s.OutputChunkLens == nil {
		s.OutputChunkLens = []int{}
	}
	if s.LastToolCallIDs == nil {
		s.LastToolCallIDs = []string{}
	}
}

// resumeDetok continues the client's detokenizer window, seeding it from
// the prompt on the first call.
func (e *Engine) resumeDetok(state *protocol.DerenderStreamState, first bool, prompt []int, opts tokenizer.DetokOptions) (*tokenizer.Detokenizer, error) {
	if first {
		return tokenizer.NewDetokenizer(e.model.Tokenizer, opts, prompt), nil
	}
	d, err := tokenizer.ResumeDetokenizer(e.model.Tokenizer, opts, tokenizer.DetokState{
		PrevTokens: state.PrevTokens, PrefixOffset: state.PrefixOffset, ReadOffset: state.ReadOffset})
	if err != nil {
		return nil, badRequest("invalid stream_state: %v", err)
	}
	return d, nil
}

func setDetokState(state *protocol.DerenderStreamState, d *tokenizer.Detokenizer) {
	ds := d.State()
	state.PrevTokens, state.PrefixOffset, state.ReadOffset = ds.PrevTokens, ds.PrefixOffset, ds.ReadOffset
}

// chatStreamPlain is the path without a parser: the detokenizer resumes
// from the carried window, nothing is replayed.
func (e *Engine) chatStreamPlain(req *protocol.DerenderChatStreamRequest, state *protocol.DerenderStreamState, a *streamAnswer) error {
	res := &a.res
	skip := req.ChatRequest == nil || req.ChatRequest.SkipSpecialTokens
	prompt := req.PromptTokenIDs
	if prompt == nil {
		prompt = req.GenerateChunk.PromptTokenIDs
	}
	d, err := e.resumeDetok(state, req.StreamState == nil, prompt, tokenizer.DetokOptions{SkipSpecialTokens: skip})
	if err != nil {
		return err
	}
	st := e.stages.Load()
	for _, c := range req.GenerateChunk.Choices {
		start := st.Start()
		text := d.Push(c.TokenIDs)
		st.Since(telemetry.StageDetokenize, start)
		lp := e.resolveLogprobs(c.Logprobs, state.LogprobContextTokenIDs)
		delta := protocol.DeltaMessage{}
		if !state.RoleSent {
			delta.Role = new("assistant")
		}
		if text != "" {
			// ChatStream takes at most one choice, so the store is free.
			a.delta.content = text
			delta.Content = &a.delta.content
		}
		state.RoleSent = true
		state.LogprobContextTokenIDs = contextTail(state.LogprobContextTokenIDs, c.TokenIDs)
		res.Chunk.Choices = append(res.Chunk.Choices, protocol.ChatStreamChoice{Index: c.Index, Delta: delta,
			Logprobs: lp, FinishReason: c.FinishReason, StopReason: stopReasonNull})
	}
	setDetokState(state, d)
	return nil
}

// chatStreamParsed is the parser path. The client echoes the whole output
// history; the live machines that have seen exactly that history come out
// of the cache, else a fresh pair replays it (same output either way).
func (e *Engine) chatStreamParsed(ctx context.Context, req *protocol.DerenderChatStreamRequest, state *protocol.DerenderStreamState, a *streamAnswer) error {
	if req.ChatRequest == nil {
		return badRequest("chat_request is required for streaming chat derender when a tool or reasoning parser is configured")
	}
	if state.VrenderCheckpoint != "" {
		return e.chatStreamCheckpoint(req, state, a)
	}
	res := &a.res
	if req.PromptTokenIDs == nil {
		return badRequest("prompt_token_ids is required for streaming chat derender when a tool or reasoning parser is configured")
	}
	sum := 0
	for _, n := range state.OutputChunkLens {
		sum += n
	}
	if sum != len(state.OutputTokenIDs) {
		return badRequest("invalid stream_state: output_chunk_lens sum (%d) does not match output_token_ids length (%d)",
			sum, len(state.OutputTokenIDs))
	}
	var delta []int
	var choice *protocol.GenerateChoice
	if len(req.GenerateChunk.Choices) == 1 {
		choice = &req.GenerateChunk.Choices[0]
		delta = choice.TokenIDs
	}
	if total := len(req.PromptTokenIDs) + len(state.OutputTokenIDs) + len(delta); total > e.model.MaxModelLen {
		return badRequest("prompt_token_ids (%d) + output_token_ids (%d) + delta token_ids (%d) exceeds max_model_len (%d).",
			len(req.PromptTokenIDs), len(state.OutputTokenIDs), len(delta), e.model.MaxModelLen)
	}
	if choice == nil {
		// Usage-only event: nothing to parse, the state passes through.
		return nil
	}
	s, err := e.newParseSetup(req.ChatRequest, req.PromptTokenIDs)
	if err != nil {
		return err
	}
	h := e.keyHasher(res.Chunk.Model, s)
	before, after := keys(h, state.OutputTokenIDs, delta)
	l := e.checkout(before)
	if l != nil {
		e.hits.Add(1)
	} else {
		e.misses.Add(1)
		if l, err = e.newLive(s); err != nil {
			return err
		}
		l.parser.SetStreaming()
		if err := ctx.Err(); err != nil {
			return err
		}
		// Replay: the machines are chunking-invariant, so the history goes
		// in at once; its output was already sent.
		l.push(state.OutputTokenIDs, false)
		l.ck = liveCheckpoint{binding: e.binding(res.Chunk.Model, s), bindKey: e.bindKey(res.Chunk.Model, req.ChatRequest), setup: s}
	}
	finished := choice.FinishReason != nil
	d := l.push(s.textIDs(delta, choice.FinishReason, e.model.Tokenizer.IsSpecial), finished)
	setDetokState(state, l.detok)
	if len(delta) > 0 {
		// The request's lists are this call's own: appending in place keeps
		// a one-token step O(1) amortised.
		state.OutputTokenIDs = append(state.OutputTokenIDs, delta...)
		state.OutputChunkLens = append(state.OutputChunkLens, len(delta))
	}
	out := protocol.ChatStreamChoice{Index: choice.Index, StopReason: stopReasonNull,
		Logprobs: e.resolveLogprobs(choice.Logprobs, state.LogprobContextTokenIDs)}
	state.LogprobContextTokenIDs = l.contextTail(state.LogprobContextTokenIDs, delta)
	out.Delta = e.delta(l.parser, d, state, &a.delta)
	if finished {
		out.FinishReason = new(l.parser.FinishReason(*choice.FinishReason))
	}
	res.Chunk.Choices = append(res.Chunk.Choices, out)
	// Issue before check-in: once cached, another call may own l.
	if err := e.issueCheckpoint(state, l, delta, finished, len(req.PromptTokenIDs)+len(state.OutputTokenIDs)); err != nil {
		return err
	}
	if !finished {
		e.checkin(after, l)
	}
	return nil
}

// delta converts a parser delta, pinning one tool-call id per index. Its
// strings live in s.
func (e *Engine) delta(parser *parsers.Parser, d parsers.Delta, state *protocol.DerenderStreamState, s *deltaStore) protocol.DeltaMessage {
	var m protocol.DeltaMessage
	if !state.RoleSent {
		m.Role = new("assistant")
		state.RoleSent = true
	}
	if d.Content != "" {
		s.content = d.Content
		m.Content = &s.content
	}
	if d.Reasoning != "" {
		s.reasoning = d.Reasoning
		m.Reasoning = &s.reasoning
		if e.cfg.ReasoningFieldCompat {
			m.ReasoningContent = new(d.Reasoning)
		}
	}
	if len(d.ToolCalls) > 0 {
		m.ToolCalls = s.calls[:0]
	}
	for i, tc := range d.ToolCalls {
		state.ToolsStreamed = true
		out := protocol.ToolCallDelta{Index: tc.Index}
		if tc.ID != "" || tc.Name != "" {
			if tc.Index < len(state.LastToolCallIDs) {
				out.ID = new(state.LastToolCallIDs[tc.Index])
			} else {
				id := parser.ToolCallID(tc.ID, newToolCallID)
				state.LastToolCallIDs = append(state.LastToolCallIDs, id)
				out.ID = &id
			}
			out.Type = new("function")
			out.Function.Name = new(tc.Name)
		}
		if tc.Arguments != "" {
			if i < len(s.args) {
				s.args[i] = tc.Arguments
				out.Function.Arguments = &s.args[i]
			} else {
				out.Function.Arguments = new(tc.Arguments)
			}
		}
		m.ToolCalls = append(m.ToolCalls, out)
	}
	return m
}
