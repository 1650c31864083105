package derender

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/tokenizer"
)

// liveCheckpoint is what a live stream knows about the checkpoints it
// issues: the sealed part of the last one, the ids pushed since, and the
// client-side state after the last call, so a call that changes only the
// ids extends the tail instead of resealing.
type liveCheckpoint struct {
	sealed string
	tail   []byte // base64url, four characters per id
	tailN  int
	out    outState
	// binding is the digest the sealed part carries; bindKey the raw
	// fields it digests, compared on a cache hit instead of rehashing.
	binding [32]byte
	bindKey string
	setup   *parseSetup
}

// outState is the client-side part of a stream's state that a checkpoint
// carries beside the machines.
type outState struct {
	Tokens            int
	RoleSent          bool
	ToolsStreamed     bool
	ToolCallIDs       []string
	LogprobContext    []int
	LogprobTextOffset int
}

func outStateOf(state *protocol.DerenderStreamState, tokens int) outState {
	return outState{Tokens: tokens, RoleSent: state.RoleSent, ToolsStreamed: state.ToolsStreamed,
		ToolCallIDs: slices.Clip(state.LastToolCallIDs), LogprobContext: slices.Clip(state.LogprobContextTokenIDs),
		LogprobTextOffset: state.LogprobTextOffset}
}

// apply writes o into a response state; the lists are clipped so the
// caller's appends never reach o's.
func (o *outState) apply(state *protocol.DerenderStreamState) {
	state.RoleSent, state.ToolsStreamed = o.RoleSent, o.ToolsStreamed
	state.LastToolCallIDs, state.LogprobContextTokenIDs = slices.Clip(o.ToolCallIDs), slices.Clip(o.LogprobContext)
	state.LogprobTextOffset = o.LogprobTextOffset
}

// bindKey is the raw form of what binding digests: equal keys, equal
// bindings.
func (e *Engine) bindKey(model string, cr *protocol.ChatCompletionRequest) string {
	return string(appendBindKey(nil, model, cr))
}

func appendBindKey(dst []byte, model string, cr *protocol.ChatCompletionRequest) []byte {
	dst = append(append(dst, model...), 0)
	dst = appendRequestKey(dst, cr)
	for _, id := range cr.StopTokenIDs {
		dst = strconv.AppendInt(append(dst, ','), int64(id), 10)
	}
	return dst
}

// chatStreamCheckpoint resumes a parsed stream from the signed checkpoint
// the client echoed: no history, no prompt, O(delta). The live state that
// issued the checkpoint is reused when this replica still holds it;
// otherwise the checkpoint is verified, decoded and its tail replayed. The
// checkpoint, not the client's plain fields, is authoritative.
func (e *Engine) chatStreamCheckpoint(req *protocol.DerenderChatStreamRequest, state *protocol.DerenderStreamState, res *protocol.DerenderChatStreamResponse) error {
	in := state.VrenderCheckpoint
	l, err := e.resumeCheckpoint(in, req.ChatRequest, res.Chunk.Model)
	if err != nil {
		return err
	}
	// The history is in the checkpoint; the client need not echo it and
	// the answer does not echo it back, so bodies stay flat.
	state.OutputTokenIDs, state.OutputChunkLens = nil, nil
	l.ck.out.apply(state)
	if len(req.GenerateChunk.Choices) == 0 {
		// Usage-only event: the state passes through.
		setDetokState(state, l.detok)
		e.checkinCk(in, l)
		return nil
	}
	choice := &req.GenerateChunk.Choices[0]
	delta := choice.TokenIDs
	if total := l.ck.out.Tokens + len(delta); total > e.model.MaxModelLen {
		e.checkinCk(in, l)
		return badRequest("prompt and output tokens so far (%d) + delta token_ids (%d) exceeds max_model_len (%d).",
			l.ck.out.Tokens, len(delta), e.model.MaxModelLen)
	}
	s := l.ck.setup
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
	if err := e.issueCheckpoint(state, l, delta, finished, l.ck.out.Tokens+len(delta)); err != nil {
		return err
	}
	if !finished {
		e.checkinCk(state.VrenderCheckpoint, l)
	}
	return nil
}

// resumeCheckpoint returns the live state a checkpoint describes, from the
// cache when this replica issued it, else rebuilt from it.
func (e *Engine) resumeCheckpoint(ckpt string, cr *protocol.ChatCompletionRequest, model string) (*live, error) {
	if e.ckCache != nil {
		if l, ok := e.ckCache.Peek(ckpt); ok && e.ckCache.Remove(ckpt) {
			// Only this engine issued the key, so it is authentic; what is
			// left to check is that it belongs to this request.
			var buf [512]byte
			if l.ck.bindKey == string(appendBindKey(buf[:0], model, cr)) {
				e.ckptHits.Add(1)
				return l, nil
			}
			e.checkinCk(ckpt, l)
			return nil, errForeignCheckpoint()
		}
	}
	sealed, tail, err := splitCheckpoint(ckpt)
	if err != nil {
		return nil, err
	}
	cp, err := e.openCheckpoint(sealed)
	if err != nil {
		return nil, err
	}
	s, err := e.newParseSetup(cr, nil)
	if err != nil {
		return nil, err
	}
	if cp.Binding != e.binding(model, s) {
		return nil, errForeignCheckpoint()
	}
	if total := cp.Tokens + len(tail); total > e.model.MaxModelLen {
		return nil, badRequest("invalid stream_state.vrender_checkpoint: %d tokens exceed max_model_len (%d)", total, e.model.MaxModelLen)
	}
	l, err := e.restoreLive(s, cp)
	if err != nil {
		return nil, err
	}
	e.ckptRestores.Add(1)
	// The tail's output was sent by the calls that pushed it; the machines
	// are chunking-invariant, so it goes in at once.
	l.push(tail, false)
	l.ck = liveCheckpoint{sealed: sealed, tailN: len(tail), binding: cp.Binding, bindKey: e.bindKey(model, cr), setup: s,
		out: outState{Tokens: cp.Tokens + len(tail), RoleSent: cp.RoleSent, ToolsStreamed: cp.ToolsStreamed,
			ToolCallIDs: cp.ToolCallIDs, LogprobContext: contextTail(cp.LogprobContext, tail), LogprobTextOffset: cp.LogprobTextOffset}}
	for _, id := range tail {
		l.ck.tail = appendTailID(l.ck.tail, id)
	}
	return l, nil
}

func errForeignCheckpoint() error {
	return badRequest("invalid stream_state.vrender_checkpoint: it belongs to another model, parser configuration or chat_request")
}

// checkinCk stores l under the checkpoint it issued.
func (e *Engine) checkinCk(ckpt string, l *live) {
	if e.ckCache != nil && ckpt != "" {
		e.ckCache.Add(ckpt, l)
	}
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
	p.SetStreaming()
	d, err := tokenizer.ResumeDetokenizer(e.model.Tokenizer, s.opts, cp.Detok)
	if err != nil {
		return nil, badRequest("invalid stream_state.vrender_checkpoint: %v", err)
	}
	return &live{parser: p, detok: d, st: e.stages.Load()}, nil
}

// issueCheckpoint sets the checkpoint of the state after this call: the
// last sealed part with delta appended to its tail when nothing but ids
// changed, else a fresh seal.
func (e *Engine) issueCheckpoint(state *protocol.DerenderStreamState, l *live, delta []int, finished bool, tokens int) error {
	ck := &l.ck
	prev := ck.out
	ck.out = outStateOf(state, tokens)
	if ck.sealed != "" && !finished && ck.tailN+len(delta) <= maxCheckpointTail && tailable(delta) &&
		prev.RoleSent == ck.out.RoleSent && prev.ToolsStreamed == ck.out.ToolsStreamed &&
		len(prev.ToolCallIDs) == len(ck.out.ToolCallIDs) && prev.LogprobTextOffset == ck.out.LogprobTextOffset {
		for _, id := range delta {
			ck.tail = appendTailID(ck.tail, id)
		}
		ck.tailN += len(delta)
		var b strings.Builder
		b.Grow(len(ck.sealed) + 1 + len(ck.tail))
		b.WriteString(ck.sealed)
		b.WriteByte('.')
		b.Write(ck.tail)
		state.VrenderCheckpoint = b.String()
		return nil
	}
	ps, err := l.parser.MarshalState()
	if err != nil {
		return fmt.Errorf("derender: checkpoint: %w", err)
	}
	o := &ck.out
	cp := checkpoint{Binding: ck.binding, Detok: l.detok.State(), Parser: ps, Tokens: o.Tokens,
		RoleSent: o.RoleSent, ToolsStreamed: o.ToolsStreamed, ToolCallIDs: o.ToolCallIDs,
		LogprobContext: o.LogprobContext, LogprobTextOffset: o.LogprobTextOffset}
	if ck.sealed, err = e.sealCheckpoint(&cp); err != nil {
		return fmt.Errorf("derender: %w", err)
	}
	ck.tail, ck.tailN = ck.tail[:0], 0
	state.VrenderCheckpoint = ck.sealed
	return nil
}

// tailable reports whether every id fits a tail entry.
func tailable(ids []int) bool {
	for _, id := range ids {
		if id < 0 || id > maxTailID {
			return false
		}
	}
	return true
}
