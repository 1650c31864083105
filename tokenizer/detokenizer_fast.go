package tokenizer

import "unicode/utf8"

// byteLevelVocab is implemented by vocabularies whose decoder may be
// exactly ByteLevel: the text of a token list is then the lossy UTF-8 of
// the concatenation of each token's bytes, so a token whose bytes are
// complete UTF-8, appended to a window whose bytes are, decodes to itself.
type byteLevelVocab interface {
	byteLevelTable() *decodeTable // nil unless the decoder is exactly ByteLevel
}

func (t *Tokenizer) byteLevelMode() bool { return t.dec.mode == decodeByteLevel }

func (t *Tokenizer) byteLevelTable() *decodeTable {
	if !t.byteLevelMode() {
		return nil
	}
	return &t.dec
}

// stepInfo is what a fast step needs of id: its step flags (0 for ids
// without a token or out of range) and, with stepFast, its decoded bytes
// (a slice of the arena, no copy).
func (d *decodeTable) stepInfo(id int) (piece string, flags uint8) {
	if uint(id) >= uint(len(d.step)) {
		return "", 0
	}
	e := d.step[id]
	if e.flags&stepFast == 0 {
		return "", e.flags
	}
	return d.bytes[e.start : e.start+uint32(e.n)], e.flags
}

// cleanState caches whether the window is clean: nothing held back
// (ReadOffset at its end) and the bytes from PrefixOffset to ReadOffset
// are valid UTF-8, so their text is those bytes.
type cleanState uint8

const (
	cleanUnknown cleanState = iota
	cleanYes
	cleanNo
)

// fastStep is Step for the common token on a byte-level vocabulary: its
// bytes are complete UTF-8 and the window holds nothing back. Then the
// window's text is prefix+piece, nothing is held, and vLLM's new_text is
// exactly the piece, so two window decodes and their allocations are
// skipped. ok is false when the slow path must decide.
func (d *Detokenizer) fastStep(id int) (text string, ok bool) {
	piece, flags := d.pieces.stepInfo(id)
	if flags&stepFast == 0 {
		return "", false
	}
	if d.opts.SkipSpecialTokens {
		special := flags&stepSpecial != 0
		if d.opts.IsSpecial != nil {
			special = d.isSpecial(id)
		}
		if special {
			return "", false
		}
	}
	if d.clean != cleanYes && !d.isClean() {
		return "", false
	}
	// The window after the step is this one token, already read: the
	// slow path's rebase(window, read, len(window)) on a clean window.
	// It is written out only when something reads it (materialize): a run
	// of fast steps then writes no pointers, which under a running GC
	// would each cost a write barrier.
	d.lastID, d.lazy = id, true
	return piece, true
}

// FastStep is Step for a token the byte-level fast path decodes: the
// steady state of a stream, where a step is a table lookup. ok is false,
// and nothing consumed, when Step must decide.
func (d *Detokenizer) FastStep(id int) (text string, ok bool) {
	if d.pieces == nil {
		return "", false
	}
	return d.fastStep(id)
}

// materialize writes out the one-token window a fast step left.
func (d *Detokenizer) materialize() {
	if d.lazy {
		d.lazy = false
		d.one[0] = d.pieces.tokens.at(d.lastID)
		d.state = DetokState{PrevTokens: d.one[:1:1], PrefixOffset: 0, ReadOffset: 1}
	}
}

// isClean reports (and caches) whether the window is clean.
func (d *Detokenizer) isClean() bool {
	if d.clean == cleanUnknown {
		d.clean = cleanNo
		s := &d.state
		if s.ReadOffset == len(s.PrevTokens) && s.PrefixOffset <= s.ReadOffset {
			buf := d.scratch[:0]
			for _, tok := range s.PrevTokens[s.PrefixOffset:s.ReadOffset] {
				buf = byteLevelDecode(buf, tok)
			}
			d.scratch = buf
			if utf8.Valid(buf) {
				d.clean = cleanYes
			}
		}
	}
	return d.clean == cleanYes
}
