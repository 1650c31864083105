package derender

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"sync/atomic"

	"github.com/vrender/vrender/internal/telemetry"
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/tokenizer"
)

// live is a parser and detokenizer mid-stream. It is owned by one call at
// a time: a call takes it out of the cache and puts it back under the key
// of the history it has then seen.
type live struct {
	parser *parsers.Parser
	detok  *tokenizer.Detokenizer
	// ck is the checkpoint bookkeeping of a stream (zero for batch).
	ck liveCheckpoint
	// st times push's stages; nil when the engine times nothing.
	st *telemetry.Stages
	// busy is set while a call holds l. The checkpoint cache keeps a live
	// state in place between calls, so a call that finds one there must
	// win busy before it reads or changes anything; a fresh state is born
	// held by the call that made it.
	busy atomic.Bool
	// lpCtx backs the logprob context windows l hands out (contextTail).
	lpCtx []int
}

// digest keys the cache: SHA-256 of (model, parser config, parsing-relevant
// request fields, decode options, prompt, output history).
type digest [sha256.Size]byte

// newLive builds fresh machines for a choice.
func (e *Engine) newLive(s *parseSetup) (*live, error) {
	p, err := e.newParser(s)
	if err != nil {
		return nil, err
	}
	return e.held(&live{parser: p, detok: tokenizer.NewDetokenizer(e.model.Tokenizer, s.opts, s.prompt)}), nil
}

// newParser builds the parser for a choice.
func (e *Engine) newParser(s *parseSetup) (*parsers.Parser, error) {
	req, err := e.reqCache.parserRequest(s.chat)
	if err != nil {
		return nil, err
	}
	p, err := parsers.New(e.cfg.Parsers, e.model.Tokenizer, req, s.prompt)
	if err != nil {
		return nil, badRequest("%v", err)
	}
	return p, nil
}

// held finishes a fresh live state, held by the calling call.
func (e *Engine) held(l *live) *live {
	l.st = e.stages.Load()
	l.busy.Store(true)
	return l
}

// lpCtxCap is how many ids a live state's logprob context backing holds
// before it is replaced: one allocation per about this many calls.
const lpCtxCap = 128

// contextTail is the package's contextTail for a stream l serves, without
// allocating on every call: the window is cut from an append-only backing
// array that l owns. Ids once handed out are never written again (only
// appended after, or the backing replaced), and the window is clipped, so
// earlier answers and the client's appends are never disturbed.
func (l *live) contextTail(ctx, ids []int) []int {
	if len(ids) >= logprobContextWindow {
		ctx, ids = nil, ids[len(ids)-logprobContextWindow:]
	} else if cut := len(ctx) + len(ids) - logprobContextWindow; cut > 0 {
		ctx = ctx[cut:]
	}
	n := len(ctx) + len(ids)
	if n == 0 {
		return []int{} // as contextTail: empty, not nil
	}
	b := l.lpCtx
	// ctx is usually the window this stream handed out last, already at
	// the end of the backing: then only ids are appended.
	atEnd := len(ctx) > 0 && len(b) >= len(ctx) && &b[len(b)-len(ctx)] == &ctx[0]
	if !atEnd && cap(b)-len(b) < n || atEnd && cap(b)-len(b) < len(ids) {
		b, atEnd = make([]int, 0, max(lpCtxCap, n)), false
	}
	if !atEnd {
		b = append(b, ctx...)
	}
	b = append(b, ids...)
	l.lpCtx = b
	return b[len(b)-n : len(b) : len(b)]
}

// push decodes ids and feeds their text to the parser; finish flushes.
func (l *live) push(ids []int, final bool) parsers.Delta {
	start := l.st.Start()
	text := l.detok.Push(ids)
	start = l.st.Since(telemetry.StageDetokenize, start)
	var d parsers.Delta
	l.parser.Push(text, &d)
	if final {
		l.parser.Finish(&d)
	}
	l.st.Since(telemetry.StageParse, start)
	return d
}

// keyHasher hashes the fixed part of a stream's key; history ids are
// appended after it.
func (e *Engine) keyHasher(model string, s *parseSetup) hash.Hash {
	h := sha256.New()
	var buf []byte
	str := func(v string) {
		buf = binary.AppendUvarint(buf[:0], uint64(len(v)))
		h.Write(buf)
		h.Write([]byte(v))
	}
	str(model)
	str(e.cfg.Parsers.ReasoningParser)
	str(e.cfg.Parsers.ToolParser)
	if e.cfg.Parsers.EnableAutoToolChoice {
		str("auto")
	} else {
		str("")
	}
	str(string(s.reqKey))
	if s.opts.SkipSpecialTokens {
		str("skip")
	} else {
		str("")
	}
	var w idWriter
	w.write(h, s.prompt)
	w.write(h, []int{len(s.prompt)})
	return h
}

// idWriter hashes ids, four little-endian bytes each (ids are below 2^32
// in every vocabulary; larger ones are reduced, which only weakens the key
// by a collision no real stream produces). Its buffer is reused across
// writes: a fresh one per write would escape to the heap.
type idWriter struct{ buf []byte }

func (w *idWriter) write(h hash.Hash, ids []int) {
	if w.buf == nil {
		w.buf = make([]byte, 2048)
	}
	for len(ids) > 0 {
		n := min(len(ids), len(w.buf)/4)
		for i, id := range ids[:n] {
			binary.LittleEndian.PutUint32(w.buf[4*i:], uint32(id))
		}
		h.Write(w.buf[:4*n])
		ids = ids[n:]
	}
}

// keys returns the key of the history and of the history followed by
// delta, hashing each id once: the fixed part, the ids, then their count.
func keys(h hash.Hash, history, delta []int) (before, after digest) {
	var w idWriter
	hc := mustClone(h)
	w.write(hc, history)
	end := mustClone(hc)
	w.write(end, []int{len(history)})
	end.Sum(before[:0])
	w.write(hc, delta)
	w.write(hc, []int{len(history) + len(delta)})
	hc.Sum(after[:0])
	return before, after
}

func mustClone(h hash.Hash) hash.Hash {
	c, err := h.(hash.Cloner).Clone()
	if err != nil {
		panic("sha256 clone: " + err.Error()) // sha256 always clones
	}
	return c
}

// checkout takes the live state for key out of the cache, or nil.
func (e *Engine) checkout(key digest) *live {
	if e.cache == nil {
		return nil
	}
	l, ok := e.cache.Peek(key)
	if !ok || !e.cache.Remove(key) {
		// Another call took it first.
		return nil
	}
	return l
}

// checkin stores l under key for the next call.
func (e *Engine) checkin(key digest, l *live) {
	if e.cache != nil {
		e.cache.Add(key, l)
	}
}
