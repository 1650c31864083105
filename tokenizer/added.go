package tokenizer

import (
	"log/slog"
	"unicode"
	"unicode/utf8"
)

// addedVocab is HF's AddedVocabulary: tokens matched in the text before the
// model sees it.
type addedVocab struct {
	list      []AddedToken // tokenizer.json order, with the ids HF assigns
	byContent map[string]int32
	byID      map[int32]*addedEntry
	special   map[string]bool // contents of special tokens
	// specialList is special's keys in tokenizer.json order.
	specialList []string
	raw         *tokenTrie // normalized=false tokens, matched on the raw text
	norm        *tokenTrie // normalized=true tokens, matched on normalized text
	maxID       int32
}

type addedEntry struct {
	tok AddedToken
	// decoded is what decoding shows: the normalized form of a normalized
	// token when normalization changes it (HF's normalized_cache).
	decoded string
}

// newAddedVocab replays HF's add_tokens over the tokenizer.json list: ids
// come from earlier added tokens or the model vocabulary when the content
// is known, and are otherwise assigned from the model's size upwards; the
// "id" field of the file is only checked.
func newAddedVocab(tokens []AddedToken, model *bpeModel, norm normalizer) *addedVocab {
	a := &addedVocab{
		byContent: make(map[string]int32, len(tokens)),
		byID:      make(map[int32]*addedEntry, len(tokens)),
		special:   make(map[string]bool),
		maxID:     -1,
	}
	nextID := int32(model.vocab.size)
	mismatched := 0
	var firstMismatch AddedToken
	for _, tok := range tokens {
		if tok.Content == "" {
			continue
		}
		if id, ok := a.byContent[tok.Content]; ok && sameAddedProps(a.byID[id].tok, tok) {
			continue
		}
		id, ok := a.byContent[tok.Content]
		if !ok {
			id, ok = model.vocab.id(tok.Content)
		}
		if !ok {
			id = nextID
			nextID++
		}
		if int(id) != tok.ID {
			if mismatched == 0 {
				firstMismatch = tok
				firstMismatch.ID = int(id)
			}
			mismatched++
		}
		e := &addedEntry{tok: tok, decoded: tok.Content}
		e.tok.ID = int(id)
		if old, ok := a.byID[id]; ok {
			// HF keeps a normalized form cached from an earlier token with this id.
			e.decoded = old.decoded
		}
		if tok.Normalized && norm != nil {
			if n := norm.normalize(tok.Content); n != tok.Content {
				e.decoded = n
			}
		}
		a.byContent[tok.Content] = id
		if tok.Special && !a.special[tok.Content] {
			a.special[tok.Content] = true
			a.specialList = append(a.specialList, tok.Content)
		}
		a.byID[id] = e
		a.list = append(a.list, e.tok)
		if id > a.maxID {
			a.maxID = id
		}
	}
	if mismatched > 0 {
		// HF warns too: the ids it assigns are the ones that count.
		slog.Warn("tokenizer: added token ids differ from tokenizer.json", "count", mismatched,
			"first", firstMismatch.Content, "id", firstMismatch.ID)
	}
	var raw, normed []triePattern
	for id, e := range a.byID {
		if e.tok.Normalized {
			normed = append(normed, triePattern{text: e.decoded, id: id})
		} else {
			raw = append(raw, triePattern{text: e.tok.Content, id: id})
		}
	}
	a.raw = newTokenTrie(raw)
	a.norm = newTokenTrie(normed)
	return a
}

func sameAddedProps(a, b AddedToken) bool {
	return a.Content == b.Content && a.SingleWord == b.SingleWord && a.LStrip == b.LStrip &&
		a.RStrip == b.RStrip && a.Normalized == b.Normalized && a.Special == b.Special
}

// segment is a span of text that is either an added token (id >= 0) or text
// still to be tokenized (id == -1).
type segment struct {
	start, end int
	id         int32
}

// findAdded cuts s into segments around the added tokens of trie, following
// HF's AddedVocabulary::find_matches including its single_word, lstrip and
// rstrip rules. The trie walk resumes at the end of the token itself, not of
// the stripped whitespace, as the reference's match iterator does.
func (a *addedVocab) findAdded(trie *tokenTrie, s string, dst []segment) []segment {
	if trie == nil || s == "" {
		return append(dst, segment{0, len(s), -1})
	}
	startOffset := 0
	sc := trie.scan(s)
	for from := 0; from < len(s); {
		mStart, mEnd, id := sc.next(from)
		if mStart < 0 {
			break
		}
		from = mEnd
		tok := &a.byID[id].tok
		start, stop := mStart, mEnd
		if tok.SingleWord {
			startSpace := start == 0 || !endsWithWord(s[:start])
			stopSpace := stop == len(s) || !startsWithWord(s[stop:])
			if !startSpace || !stopSpace {
				continue
			}
		}
		if tok.LStrip {
			start = max(trailingSpaceStart(s[:start]), startOffset)
		}
		if tok.RStrip {
			stop += leadingSpaceLen(s[stop:])
		}
		if startOffset < start {
			dst = append(dst, segment{startOffset, start, -1})
		}
		dst = append(dst, segment{start, stop, id})
		startOffset = stop
	}
	if startOffset != len(s) {
		dst = append(dst, segment{startOffset, len(s), -1})
	}
	return dst
}

// isWordRune is the Unicode \w of Rust's regex crate.
func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) ||
		unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Other_Alphabetic, r) ||
		unicode.Is(unicode.Pc, r) || r == 0x200C || r == 0x200D
}

func endsWithWord(s string) bool {
	r, n := utf8.DecodeLastRuneInString(s)
	return n > 0 && isWordRune(r)
}

func startsWithWord(s string) bool {
	r, n := utf8.DecodeRuneInString(s)
	return n > 0 && isWordRune(r)
}

// trailingSpaceStart is the offset where the whitespace run ending s begins.
func trailingSpaceStart(s string) int {
	i := len(s)
	for i > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:i])
		if !unicode.IsSpace(r) {
			break
		}
		i -= n
	}
	return i
}

// leadingSpaceLen is the byte length of the whitespace run starting s.
func leadingSpaceLen(s string) int {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			break
		}
		i += n
	}
	return i
}
