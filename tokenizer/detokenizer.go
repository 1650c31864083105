package tokenizer

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// initialDetokOffset is vLLM's INITIAL_INCREMENTAL_DETOKENIZATION_OFFSET: a
// prompt-seeded window starts this many tokens before the read offset.
const initialDetokOffset = 5

// detokHoldBackSuffix is what a decoder yields for bytes that are not (yet)
// valid UTF-8; vLLM holds back any text ending in it.
const detokHoldBackSuffix = "\uFFFD"

// DetokOptions are the per-request decoding parameters of vLLM's
// detokenize_incrementally.
type DetokOptions struct {
	// SkipSpecialTokens drops the ids IsSpecial selects (skip_special_tokens).
	SkipSpecialTokens bool

	// SpacesBetweenSpecialTokens joins added-token pieces with a space
	// (spaces_between_special_tokens). vLLM reads it only on the slow
	// tokenizer path; with a fast (tokenizer.json) tokenizer it has no effect,
	// because vLLM then calls convert_tokens_to_string directly.
	SpacesBetweenSpecialTokens bool

	// IsSpecial selects the ids SkipSpecialTokens drops. transformers uses
	// all_special_ids from the tokenizer config, which can differ from
	// tokenizer.json's "special" flags; nil means Tokenizer.IsSpecial.
	IsSpecial func(id int) bool

	// SlowTokenizer selects vLLM's path for tokenizers that are not "fast"
	// (_convert_tokens_to_string_with_added_encoders): added tokens are kept
	// verbatim between decoded runs, special token strings are dropped when
	// skipping, and SpacesBetweenSpecialTokens applies. Building it costs
	// O(number of added tokens) per Detokenizer. vLLM uses the fast path for
	// every tokenizer.json tokenizer, so leave this false to match it.
	SlowTokenizer bool
}

// detokVocab is what the detokenizer needs from a tokenizer; *Tokenizer
// implements it, and tests substitute tokenizers with known decoders.
type detokVocab interface {
	IDToToken(id int) (string, bool)
	TokenToID(token string) (int, bool)
	TokensToString(tokens []string) string
	IsSpecial(id int) bool
	Len() int
	AddedTokens() []AddedToken
}

// Detokenizer turns a stream of token ids into text exactly as vLLM's
// detokenize_incrementally does when vLLM's derender calls it once per
// token: text is emitted only once it cannot change (a trailing U+FFFD from
// an unfinished UTF-8 sequence is held back), and each step decodes only the
// window since the emission before last, so a step costs O(window), not
// O(output): a couple of tokens for real text. Like vLLM's, the window grows
// while text is held back — a run of ids that never completes a character,
// or of out-of-vocabulary ids — and a state whose window passed
// MaxPrevTokens cannot be resumed, exactly as vLLM rejects it. It is not
// safe for concurrent use.
type Detokenizer struct {
	vocab     detokVocab
	opts      DetokOptions
	isSpecial func(id int) bool
	vocabLen  int
	slow      *addedTokenDecoder // nil on the fast path
	state     DetokState
	// pieces is set for byte-level vocabularies (fastStep); clean caches
	// whether the window holds nothing back, one backs the one-token
	// window fastStep leaves, scratch is isClean's buffer.
	// lazy says the window is the one token lastID, not yet written
	// to state (see materialize).
	pieces  *decodeTable
	clean   cleanState
	one     [1]string
	scratch []byte
	lazy    bool
	lastID  int
}

// NewDetokenizer returns a detokenizer seeded from the end of the prompt,
// as vLLM's convert_prompt_ids_to_tokens does, so decoders that drop a
// leading space at the start of their input (SentencePiece's Metaspace,
// Strip) keep the first output token's space. Nil promptIDs start an empty
// window, as vLLM does when the client sends no prompt ids.
func NewDetokenizer(tok *Tokenizer, opts DetokOptions, promptIDs []int) *Detokenizer {
	return newDetokenizer(tok, opts, promptIDs)
}

// ResumeDetokenizer continues a stream from a state that State returned,
// possibly on another replica after a JSON round trip. It rejects states
// the detokenizer could not have produced (see DetokState.Validate).
func ResumeDetokenizer(tok *Tokenizer, opts DetokOptions, state DetokState) (*Detokenizer, error) {
	return resumeDetokenizer(tok, opts, state)
}

func newDetokenizer(v detokVocab, opts DetokOptions, promptIDs []int) *Detokenizer {
	d := newBareDetokenizer(v, opts)
	d.state = d.seedState(promptIDs)
	return d
}

func resumeDetokenizer(v detokVocab, opts DetokOptions, state DetokState) (*Detokenizer, error) {
	if err := state.Validate(); err != nil {
		return nil, fmt.Errorf("invalid detokenizer state: %w", err)
	}
	d := newBareDetokenizer(v, opts)
	// Steps append to the window, so it must not share the caller's array.
	d.state = state.clone()
	return d, nil
}

func newBareDetokenizer(v detokVocab, opts DetokOptions) *Detokenizer {
	d := &Detokenizer{vocab: v, opts: opts, isSpecial: opts.IsSpecial, vocabLen: v.Len()}
	if d.isSpecial == nil {
		d.isSpecial = v.IsSpecial
	}
	if opts.SlowTokenizer {
		d.slow = newAddedTokenDecoder(v, d.isSpecial)
	} else if bl, ok := v.(byteLevelVocab); ok {
		d.pieces = bl.byteLevelTable()
	}
	return d
}

// seedState is vLLM's convert_prompt_ids_to_tokens: the last
// initialDetokOffset+2 prompt ids (the two extra absorb special tokens that
// skipping may drop) become the window, all of it already read.
func (d *Detokenizer) seedState(promptIDs []int) DetokState {
	tail := promptIDs[max(len(promptIDs)-initialDetokOffset-2, 0):]
	toks := make([]string, 0, len(tail)+1)
	for _, id := range tail {
		if d.opts.SkipSpecialTokens && d.isSpecial(id) {
			continue
		}
		// Unknown ids become "" (vLLM's _replace_none_with_empty); vLLM
		// checks no range here, and HF's id_to_token has no token for them.
		var tok string
		if id >= 0 && id < d.vocabLen {
			tok, _ = d.vocab.IDToToken(id)
		}
		toks = append(toks, tok)
	}
	read := len(toks)
	return DetokState{PrevTokens: toks, PrefixOffset: max(read-initialDetokOffset, 0), ReadOffset: read}
}

// Step consumes one token id and returns the text it completes, exactly the
// new_text of one detokenize_incrementally call. Ids outside [0, Len) and
// ids without a token decode to "".
func (d *Detokenizer) Step(id int) string {
	if d.pieces != nil {
		if text, ok := d.fastStep(id); ok {
			return text
		}
	}
	d.materialize()
	window := d.state.PrevTokens
	if tok, keep := d.convertID(id); keep {
		window = append(window, tok)
	}
	prefix, read := d.state.PrefixOffset, d.state.ReadOffset
	// Full slice expressions: a decoder must never see (or append over)
	// the tokens after its slice.
	prefixText := d.tokensToString(window[prefix:read:read])
	newText := d.tokensToString(window[prefix:len(window):len(window)])

	// vLLM compares Python string lengths: code points, not bytes.
	prefixRunes := utf8.RuneCountInString(prefixText)
	if utf8.RuneCountInString(newText) <= prefixRunes || strings.HasSuffix(newText, detokHoldBackSuffix) {
		d.rebase(window, prefix, read)
		return ""
	}
	d.rebase(window, read, len(window))
	return newText[detokRuneOffset(newText, prefixRunes):]
}

// Push consumes a chunk of ids and returns the concatenation of their Step
// texts, which is what vLLM's streaming derender returns for the chunk (it
// calls detokenize_incrementally once per token).
func (d *Detokenizer) Push(ids []int) string {
	if len(ids) == 1 {
		// The streaming case: no builder, and a fast step's text is a
		// slice of the vocabulary, so nothing is allocated.
		return d.Step(ids[0])
	}
	var b strings.Builder
	if d.pieces != nil {
		// The pieces' total is the text's size but for held-back bytes
		// and replacement characters: one allocation instead of doublings.
		n := 0
		for _, id := range ids {
			piece, _ := d.pieces.stepInfo(id)
			n += len(piece)
		}
		b.Grow(n)
	}
	for _, id := range ids {
		b.WriteString(d.Step(id))
	}
	return b.String()
}

// State returns a copy of the current state, for a client to carry to the
// next call (vLLM's stream_state).
func (d *Detokenizer) State() DetokState {
	d.materialize()
	return d.state.clone()
}

// rebase records the new offsets and drops the tokens before the prefix
// offset, which no later step reads: vLLM's derender trims the window the
// same way after every token, so the carried state stays as small as
// vLLM's.
func (d *Detokenizer) rebase(window []string, prefix, read int) {
	d.state = DetokState{PrevTokens: window[prefix:], PrefixOffset: 0, ReadOffset: read - prefix}
	d.clean = cleanUnknown
}

// convertID mirrors the new-token conversion in detokenize_incrementally:
// out-of-range ids become "", skipped special ids add nothing (keep false).
func (d *Detokenizer) convertID(id int) (tok string, keep bool) {
	if id < 0 || id >= d.vocabLen {
		return "", true
	}
	if d.opts.SkipSpecialTokens && d.isSpecial(id) {
		return "", false
	}
	tok, _ = d.vocab.IDToToken(id)
	return tok, true
}

func (d *Detokenizer) tokensToString(tokens []string) string {
	if d.slow != nil {
		return d.slow.tokensToString(d, tokens)
	}
	return d.vocab.TokensToString(tokens)
}

// detokRuneOffset returns the byte offset of the n-th code point of s (len(s)
// if s has fewer), the Go spelling of Python's s[n:].
func detokRuneOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}
