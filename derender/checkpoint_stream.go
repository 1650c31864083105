package derender

import (
	"slices"
	"strconv"
	"strings"

	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/tokenizer"
)

// liveCheckpoint is what a live stream knows about the checkpoints it
// issues: the last one, and the client-side state after the last call, so
// a call that changes only the ids extends the tail instead of resealing.
type liveCheckpoint struct {
	// text holds cur, the checkpoint last issued: the sealed part (its
	// first sealedN bytes), then, once ids were pushed since, "." and four
	// characters for each of tailN ids. Between seals text is only
	// appended to, and a strings.Builder never rewrites what it wrote, so
	// every checkpoint handed out stays valid and issuing the next one
	// copies nothing.
	text    strings.Builder
	cur     string
	sealedN int
	tailN   int
	// key is what the checkpoint cache holds the stream under ("" when
	// it is not there).
	key string
	out outState
	// binding is the digest the sealed part carries; bindKey the raw
	// fields it digests, compared on a cache hit instead of rehashing.
	binding [32]byte
	bindKey string
	setup   *parseSetup
	// boundCR and boundModel are the request and model bindKey last
	// matched: a client re-sends the same chat_request, which the
	// server's request cache decodes once, so a hit usually skips
	// rebuilding the key. Requests are values the engine never modifies.
	boundCR    *protocol.ChatCompletionRequest
	boundModel string
}

// boundTo reports whether model and cr are what the checkpoint binds.
func (ck *liveCheckpoint) boundTo(model string, cr *protocol.ChatCompletionRequest) bool {
	if cr == ck.boundCR && model == ck.boundModel {
		return true
	}
	var buf [512]byte
	if ck.bindKey != string(appendBindKey(buf[:0], model, cr)) {
		return false
	}
	ck.boundCR, ck.boundModel = cr, model
	return true
}

// tailRoom is the room a checkpoint's text keeps for its tail.
const tailRoom = 1 + 4*maxCheckpointTail

// setIssued makes s, whose sealed part is sealedN bytes followed by a
// tail of tailN ids, the checkpoint last issued.
func (ck *liveCheckpoint) setIssued(s string, sealedN, tailN int) {
	ck.text.Reset()
	ck.text.Grow(len(s) + tailRoom)
	ck.text.WriteString(s)
	ck.cur, ck.sealedN, ck.tailN = ck.text.String(), sealedN, tailN
}

// appendTail issues the checkpoint last issued with ids appended to its
// tail.
func (ck *liveCheckpoint) appendTail(ids []int) {
	if ck.tailN == 0 {
		ck.text.WriteByte('.')
	}
	var b [4]byte
	for _, id := range ids {
		ck.text.Write(appendTailID(b[:0], id))
	}
	ck.tailN += len(ids)
	ck.cur = ck.text.String()
}

// sealed is the sealed part of the checkpoint last issued.
func (ck *liveCheckpoint) sealed() string { return ck.cur[:ck.sealedN] }

// ckKeyLen is how much of a sealed part keys the checkpoint cache: its
// end, which is the tag, so distinct seals have distinct keys. A stream
// keeps its key between seals; a hit is still only the live state whose
// last checkpoint equals the client's, byte for byte.
const ckKeyLen = 32

func ckKey(sealed string) string {
	return sealed[max(len(sealed)-ckKeyLen, 0):]
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
func (e *Engine) chatStreamCheckpoint(req *protocol.DerenderChatStreamRequest, state *protocol.DerenderStreamState, a *streamAnswer) error {
	res := &a.res
	l, err := e.resumeCheckpoint(state.VrenderCheckpoint, req.ChatRequest, res.Chunk.Model)
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
		e.releaseCk(l)
		return nil
	}
	choice := &req.GenerateChunk.Choices[0]
	delta := choice.TokenIDs
	if total := l.ck.out.Tokens + len(delta); total > e.model.MaxModelLen {
		e.releaseCk(l)
		return badRequest("prompt and output tokens so far (%d) + delta token_ids (%d) exceeds max_model_len (%d).",
			l.ck.out.Tokens, len(delta), e.model.MaxModelLen)
	}
	s := l.ck.setup
	finished := choice.FinishReason != nil
	d := l.push(s.textIDs(delta, choice.FinishReason, e.model.Tokenizer.IsSpecial), finished)
	setDetokState(state, l.detok)
	out := protocol.ChatStreamChoice{Index: choice.Index, StopReason: stopReasonNull,
		Logprobs: e.resolveLogprobs(choice.Logprobs, state.LogprobContextTokenIDs)}
	state.LogprobContextTokenIDs = l.contextTail(state.LogprobContextTokenIDs, delta)
	out.Delta = e.delta(l.parser, d, state, &a.delta)
	if finished {
		out.FinishReason = new(l.parser.FinishReason(*choice.FinishReason))
	}
	res.Chunk.Choices = append(res.Chunk.Choices, out)
	if err := e.issueCheckpoint(state, l, delta, finished, l.ck.out.Tokens+len(delta)); err != nil {
		// The machines moved past the checkpoint l last issued.
		e.dropCk(l)
		return err
	}
	if finished {
		e.dropCk(l)
	} else {
		e.releaseCk(l)
	}
	return nil
}

// resumeCheckpoint returns the live state a checkpoint describes, held by
// the caller: from the cache when this replica issued it, else rebuilt
// from it.
func (e *Engine) resumeCheckpoint(ckpt string, cr *protocol.ChatCompletionRequest, model string) (*live, error) {
	if l := e.acquireCk(ckpt); l != nil {
		// Only this engine issued the checkpoint, so it is authentic;
		// what is left to check is that it belongs to this request.
		if l.ck.boundTo(model, cr) {
			e.ckptHits.Add(1)
			return l, nil
		}
		e.releaseCk(l)
		return nil, errForeignCheckpoint()
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
	l.ck = liveCheckpoint{binding: cp.Binding, bindKey: e.bindKey(model, cr), setup: s, boundCR: cr, boundModel: model,
		out: outState{Tokens: cp.Tokens + len(tail), RoleSent: cp.RoleSent, ToolsStreamed: cp.ToolsStreamed,
			ToolCallIDs: cp.ToolCallIDs, LogprobContext: l.contextTail(cp.LogprobContext, tail), LogprobTextOffset: cp.LogprobTextOffset}}
	l.ck.setIssued(ckpt, len(sealed), len(tail))
	return l, nil
}

func errForeignCheckpoint() error {
	return badRequest("invalid stream_state.vrender_checkpoint: it belongs to another model, parser configuration or chat_request")
}

// acquireCk returns the cached live state whose last checkpoint is ckpt,
// held by the caller, or nil. A state stays in the cache while it is held
// (moving it out and back on every call would cost an allocation and two
// more map updates): busy says who holds it.
func (e *Engine) acquireCk(ckpt string) *live {
	if e.ckCache == nil {
		return nil
	}
	sealed := ckpt
	if i := strings.IndexByte(ckpt, '.'); i >= 0 {
		sealed = ckpt[:i]
	}
	l, ok := e.ckCache.Get(ckKey(sealed))
	if !ok || !l.busy.CompareAndSwap(false, true) {
		// Unknown here, or held by a concurrent call (a client retrying):
		// the checkpoint itself still resumes.
		return nil
	}
	if l.ck.cur != ckpt {
		// The stream moved on (this is a retry of an earlier call) or a
		// different checkpoint shares the key: not this state.
		l.busy.Store(false)
		return nil
	}
	return l
}

// releaseCk lets go of a held live state, cached under its last
// checkpoint for the next call. It re-keys the cache only when a seal
// changed the key.
func (e *Engine) releaseCk(l *live) {
	if e.ckCache == nil || l.ck.cur == "" {
		return
	}
	key := ckKey(l.ck.sealed())
	if key == l.ck.key {
		l.busy.Store(false)
		return
	}
	e.uncacheCk(l)
	l.ck.key = key
	l.busy.Store(false)
	// From here l may be held by another call; key is this call's own.
	e.ckCache.Add(key, l)
}

// dropCk takes a held live state out of the cache for good: its stream
// ended, or its machines no longer match the checkpoint it last issued. It
// stays busy, so a call that found it just before is turned away.
func (e *Engine) dropCk(l *live) {
	if e.ckCache != nil {
		e.uncacheCk(l)
	}
	l.ck.key = ""
}

// uncacheCk removes l's cache entry if it is still l's (a cold resume of
// the same checkpoint may have replaced it).
func (e *Engine) uncacheCk(l *live) {
	if l.ck.key == "" {
		return
	}
	if v, ok := e.ckCache.Peek(l.ck.key); ok && v == l {
		e.ckCache.Remove(l.ck.key)
	}
}

// restoreLive rebuilds the machines a checkpoint saved.
func (e *Engine) restoreLive(s *parseSetup, cp *checkpoint) (*live, error) {
	preq, err := e.reqCache.parserRequest(s.chat)
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
	return e.held(&live{parser: p, detok: d}), nil
}

// issueCheckpoint sets the checkpoint of the state after this call: the
// last sealed part with delta appended to its tail when nothing but ids
// changed, else a fresh seal.
func (e *Engine) issueCheckpoint(state *protocol.DerenderStreamState, l *live, delta []int, finished bool, tokens int) error {
	ck := &l.ck
	prev := ck.out
	ck.out = outStateOf(state, tokens)
	if ck.cur != "" && !finished && ck.tailN+len(delta) <= maxCheckpointTail && tailable(delta) &&
		prev.RoleSent == ck.out.RoleSent && prev.ToolsStreamed == ck.out.ToolsStreamed &&
		len(prev.ToolCallIDs) == len(ck.out.ToolCallIDs) && prev.LogprobTextOffset == ck.out.LogprobTextOffset {
		ck.appendTail(delta)
		state.VrenderCheckpoint = ck.cur
		return nil
	}
	o := &ck.out
	cp := checkpoint{Binding: ck.binding, Detok: l.detok.State(), Parser: l.parser.AppendState(nil), Tokens: o.Tokens,
		RoleSent: o.RoleSent, ToolsStreamed: o.ToolsStreamed, ToolCallIDs: o.ToolCallIDs,
		LogprobContext: o.LogprobContext, LogprobTextOffset: o.LogprobTextOffset}
	e.sealCheckpoint(ck, &cp)
	state.VrenderCheckpoint = ck.cur
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
