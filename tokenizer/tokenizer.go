// Package tokenizer loads Hugging Face tokenizer.json files and encodes and
// decodes text with the same results as the Rust `tokenizers` library 0.23.
package tokenizer

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Tokenizer is immutable after loading and safe for concurrent use.
type Tokenizer struct {
	normalizer    normalizer // nil: none
	preTokenizers []preTokenizer
	model         *bpeModel
	added         *addedVocab
	postProcessor postProcessor // nil: none
	decoder       decoder       // nil: tokens are joined with spaces

	// scratch pools the buffers of encode calls.
	scratch sync.Pool

	dec decodeTable

	// segCache caches the ids of the text between added tokens; nil when
	// disabled or when segCacheOff says why segments are not independent.
	segCache    atomic.Pointer[segmentCache]
	segFirstKey bool  // the segment at offset 0 has a key of its own
	segCacheOff error // why the cache cannot be used; nil: it can
}

// AddedToken is an entry of tokenizer.json's added_tokens.
type AddedToken struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// init derives the read-only tables used at run time.
func (t *Tokenizer) init() {
	t.scratch.New = func() any { return new(encodeScratch) }
	t.dec = newDecodeTable(t)
	t.segFirstKey, t.segCacheOff = segmentPolicy(t.normalizer, t.preTokenizers)
	t.SetSegmentCacheSize(DefaultSegmentCacheBytes)
}

// SetSegmentCacheSize bounds the segment cache at maxBytes and empties it;
// 0 disables it. The cache maps the text between added tokens to its ids, so
// a conversation re-rendered each turn encodes only its new messages. It
// stays off for a tokenizer whose segments do not encode independently
// (SegmentCacheStats reports why). Safe to call concurrently with Encode.
func (t *Tokenizer) SetSegmentCacheSize(maxBytes int64) {
	if maxBytes <= 0 || t.segCacheOff != nil {
		t.segCache.Store(nil)
		return
	}
	t.segCache.Store(newSegmentCache(maxBytes))
}

// SegmentCacheStats describes the segment cache.
type SegmentCacheStats struct {
	Enabled      bool
	Disabled     error // why the tokenizer cannot use it; nil: it can
	Hits, Misses int64
	Bytes        int64 // approximate bytes held
}

// SegmentCacheStats returns the segment cache's counters.
func (t *Tokenizer) SegmentCacheStats() SegmentCacheStats {
	st := SegmentCacheStats{Disabled: t.segCacheOff}
	if c := t.segCache.Load(); c != nil {
		st.Enabled = true
		st.Hits, st.Misses, st.Bytes = c.stats()
	}
	return st
}

// Encode returns the token IDs of text, as HF Tokenizer.encode(text, add_special_tokens).
func (t *Tokenizer) Encode(text string, addSpecialTokens bool) []int {
	text = validString(text)
	sc := t.scratch.Get().(*encodeScratch)
	ids := make([]int, 0, len(text)/3+4)
	ids = t.encode(text, ids, sc)
	t.scratch.Put(sc)
	if t.postProcessor != nil {
		ids = t.postProcessor.apply(ids, addSpecialTokens)
	}
	return ids
}

// EncodeOrdinary returns the token IDs of text with no added token
// recognised in it, as tiktoken's encode_ordinary: text that spells a
// special token is encoded as ordinary text. No post-processing is applied.
// openai_harmony renders message text this way.
func (t *Tokenizer) EncodeOrdinary(text string) []int {
	text = validString(text)
	if text == "" {
		return nil
	}
	sc := t.scratch.Get().(*encodeScratch)
	ids := make([]int, 0, len(text)/3+4)
	if t.normalizer != nil {
		text = t.normalizer.normalize(text)
	}
	ids = t.preTokenize(0, piece{s: text, origin: true}, ids, sc)
	t.scratch.Put(sc)
	return ids
}

// Decode returns the text of ids, as HF Tokenizer.decode(ids, skip_special_tokens).
func (t *Tokenizer) Decode(ids []int, skipSpecialTokens bool) string {
	return t.dec.decode(t, ids, skipSpecialTokens)
}

// IDToToken returns the token string of id (added tokens first), as HF id_to_token.
func (t *Tokenizer) IDToToken(id int) (string, bool) {
	if id < 0 || id > maxInt32 {
		return "", false
	}
	if e, ok := t.added.byID[int32(id)]; ok {
		return e.decoded, true
	}
	return t.model.vocab.token(id)
}

// TokenToID returns the id of a token string (added tokens first), as HF token_to_id.
func (t *Tokenizer) TokenToID(token string) (int, bool) {
	if id, ok := t.added.byContent[token]; ok {
		return int(id), true
	}
	id, ok := t.model.vocab.id(token)
	return int(id), ok
}

// IsSpecial reports whether id is an added token marked special.
func (t *Tokenizer) IsSpecial(id int) bool {
	if id < 0 || id > maxInt32 {
		return false
	}
	e, ok := t.added.byID[int32(id)]
	return ok && e.tok.Special
}

// SpecialTokens lists the contents of the added tokens marked special, in
// tokenizer.json order: the ids IsSpecial selects, as text. The slice is
// shared; callers must not modify it.
func (t *Tokenizer) SpecialTokens() []string {
	return t.added.specialList
}

// Len is transformers' len(tokenizer): one more than the largest id in the vocabulary or added tokens.
func (t *Tokenizer) Len() int {
	return max(len(t.model.vocab.tokens), int(t.added.maxID)+1)
}

// TokensToString applies the decoder to token strings, as transformers' convert_tokens_to_string.
func (t *Tokenizer) TokensToString(tokens []string) string {
	if t.decoder == nil {
		return strings.Join(tokens, " ")
	}
	// Decoders build new slices and never write to their input.
	out := t.decoder.decodeChain(tokens)
	if len(out) == 1 {
		return out[0]
	}
	return strings.Join(out, "")
}

// AddedTokens returns the added tokens in tokenizer.json order.
func (t *Tokenizer) AddedTokens() []AddedToken {
	return slices.Clone(t.added.list)
}

const maxInt32 = 1<<31 - 1
