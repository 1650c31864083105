package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// byteLevelVocab is implemented by vocabularies whose decoder is exactly
// ByteLevel: the text of a token list is then the lossy UTF-8 of the
// concatenation of each token's bytes, so a token whose bytes are complete
// UTF-8, appended to a window whose bytes are, decodes to itself.
type byteLevelVocab interface {
	byteLevelMode() bool
	byteLevelPiece(id int) (string, bool)
}

func (t *Tokenizer) byteLevelMode() bool { return t.dec.mode == decodeByteLevel }

// byteLevelPiece is id's decoded bytes, a slice of the decode table's
// arena (no copy). ok is false for ids without a token.
func (t *Tokenizer) byteLevelPiece(id int) (string, bool) {
	d := &t.dec
	if d.mode != decodeByteLevel || id < 0 || id >= len(d.known) || !d.known[id] {
		return "", false
	}
	start := uint32(0)
	if id > 0 {
		start = d.ends[id-1]
	}
	return d.bytes[start:d.ends[id]], true
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
	piece, known := d.pieces.byteLevelPiece(id)
	if !known || piece == "" || strings.HasSuffix(piece, detokHoldBackSuffix) || !utf8.ValidString(piece) {
		return "", false
	}
	if d.opts.SkipSpecialTokens && d.isSpecial(id) {
		return "", false
	}
	if !d.isClean() {
		return "", false
	}
	tok, _ := d.vocab.IDToToken(id)
	// The window after the step is this one token, already read: the
	// slow path's rebase(window, read, len(window)) on a clean window.
	d.one[0] = tok
	d.state = DetokState{PrevTokens: d.one[:1:1], PrefixOffset: 0, ReadOffset: 1}
	d.clean = cleanYes
	return piece, true
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
