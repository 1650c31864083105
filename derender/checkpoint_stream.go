package derender

import (
	"encoding/json"
	"fmt"

	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/tokenizer"
)

// chatStreamCheckpoint resumes a parsed stream from the signed checkpoint
// the client echoed: no history, no prompt, no cache, O(delta). The
// checkpoint, not the client's plain fields, is authoritative.
func (e *Engine) chatStreamCheckpoint(req *protocol.DerenderChatStreamRequest, state *protocol.DerenderStreamState, res *protocol.DerenderChatStreamResponse) error {
	cp, err := e.openCheckpoint(state.VrenderCheckpoint)
	if err != nil {
		return err
	}
	s, err := e.newParseSetup(req.ChatRequest, nil)
	if err != nil {
		return err
	}
	if cp.Binding != e.binding(res.Chunk.Model, s) {
		return badRequest("invalid stream_state.vrender_checkpoint: it belongs to another model, parser configuration or chat_request")
	}
	// The history is in the checkpoint; the client need not echo it and
	// the answer does not echo it back, so bodies stay flat.
	state.OutputTokenIDs, state.OutputChunkLens = nil, nil
	state.PrevTokens, state.PrefixOffset, state.ReadOffset = cp.Detok.PrevTokens, cp.Detok.PrefixOffset, cp.Detok.ReadOffset
	state.RoleSent, state.ToolsStreamed, state.LastToolCallIDs = cp.RoleSent, cp.ToolsStreamed, cp.ToolCallIDs
	state.LogprobContextTokenIDs, state.LogprobTextOffset = cp.LogprobContext, cp.LogprobTextOffset
	if len(req.GenerateChunk.Choices) == 0 {
		// Usage-only event: the state passes through.
		return nil
	}
	choice := &req.GenerateChunk.Choices[0]
	delta := choice.TokenIDs
	if total := cp.Tokens + len(delta); total > e.model.MaxModelLen {
		return badRequest("prompt and output tokens so far (%d) + delta token_ids (%d) exceeds max_model_len (%d).",
			cp.Tokens, len(delta), e.model.MaxModelLen)
	}
	l, err := e.restoreLive(s, cp)
	if err != nil {
		return err
	}
	finished := choice.FinishReason != nil
	d := l.push(s.textIDs(delta, choice.FinishReason, e.model.Tokenizer.IsSpecial), finished)
	setDetokState(state, l.detok)
	out := protocol.ChatStreamChoice{Index: choice.Index, StopReason: json.RawMessage("null"),
		Logprobs: e.resolveLogprobs(choice.Logprobs, state.LogprobContextTokenIDs)}
	state.LogprobContextTokenIDs = contextTail(state.LogprobContextTokenIDs, delta)
	out.Delta = e.delta(d, state)
	if finished {
		out.FinishReason = ptr(l.parser.FinishReason(*choice.FinishReason))
	}
	res.Chunk.Choices = append(res.Chunk.Choices, out)
	return e.attachCheckpoint(state, l, cp.Binding, cp.Tokens+len(delta))
}

// restoreLive rebuilds the machines a checkpoint saved.
func (e *Engine) restoreLive(s *parseSetup, cp *checkpoint) (*live, error) {
	preq, err := parserRequest(s.chat)
	if err != nil {
		return nil, err
	}
	p, err := parsers.Restore(e.cfg.Parsers, e.model.Tokenizer, preq, cp.Parser)
	if err != nil {
		return nil, badRequest("invalid stream_state.vrender_checkpoint: %v", err)
	}
	d, err := tokenizer.ResumeDetokenizer(e.model.Tokenizer, s.opts, cp.Detok)
	if err != nil {
		return nil, badRequest("invalid stream_state.vrender_checkpoint: %v", err)
	}
	return &live{parser: p, detok: d}, nil
}

// attachCheckpoint signs the state after this call into the returned
// stream_state.
func (e *Engine) attachCheckpoint(state *protocol.DerenderStreamState, l *live, binding [32]byte, tokens int) error {
	ps, err := l.parser.MarshalState()
	if err != nil {
		return fmt.Errorf("derender: checkpoint: %w", err)
	}
	cp := checkpoint{Binding: binding, Detok: l.detok.State(), Parser: ps, Tokens: tokens,
		RoleSent: state.RoleSent, ToolsStreamed: state.ToolsStreamed, ToolCallIDs: state.LastToolCallIDs,
		LogprobContext: state.LogprobContextTokenIDs, LogprobTextOffset: state.LogprobTextOffset}
	if state.VrenderCheckpoint, err = e.sealCheckpoint(&cp); err != nil {
		return fmt.Errorf("derender: %w", err)
	}
	return nil
}
