package tokenizer

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// piece is a part of the text on its way to the model.
type piece struct {
	s string
	// byteLevel means s holds raw bytes standing for their byte-level runes:
	// the ByteLevel pre-tokenizer's mapping is deferred so the model can
	// start from bytes (see bpeModel.byteIDs).
	byteLevel bool
	// origin means the piece starts at offset 0 of the input, which
	// Metaspace's prepend_scheme "first" tests.
	origin bool
}

// preTokenizer splits one piece, appending the resulting pieces to dst.
// Empty pieces are dropped by the caller, as PreTokenizedString::split does.
type preTokenizer interface {
	split(p piece, dst []piece, sc *encodeScratch) []piece
}

// cutPiece appends the pieces of p selected by the spans in segs.
func cutPiece(p piece, segs []splitSeg, dst []piece) []piece {
	for _, g := range segs {
		dst = append(dst, piece{s: p.s[g.start:g.end], byteLevel: p.byteLevel, origin: p.origin && g.start == 0})
	}
	return dst
}

// splitPieceByMatches is NormalizedString::split over the matches of m.
func splitPieceByMatches(p piece, m matcher, b splitBehavior, invert bool, dst []piece, sc *encodeScratch) []piece {
	sc.pairs = m.find(p.s, sc.pairs[:0])
	sc.segs = segmentsFromMatches(len(p.s), sc.pairs, invert, sc.segs[:0])
	return cutPiece(p, applyBehavior(sc.segs, b), dst)
}

// splitPieceByRune is NormalizedString::split with a character predicate:
// every character for which pred holds is one match.
func splitPieceByRune(p piece, pred func(rune) bool, b splitBehavior, dst []piece, sc *encodeScratch) []piece {
	pairs := sc.pairs[:0]
	for i, r := range p.s {
		if pred(r) {
			pairs = append(pairs, i, i+utf8.RuneLen(r))
		}
	}
	sc.pairs = pairs
	sc.segs = segmentsFromMatches(len(p.s), pairs, false, sc.segs[:0])
	return cutPiece(p, applyBehavior(sc.segs, b), dst)
}

type splitPreTok struct {
	m        matcher
	behavior splitBehavior
	invert   bool
}

func (t *splitPreTok) split(p piece, dst []piece, sc *encodeScratch) []piece {
	return splitPieceByMatches(p, t.m, t.behavior, t.invert, dst, sc)
}

// byteLevelPreTok is the ByteLevel pre-tokenizer: optional prefix space,
// optional GPT-2 regex split, then the byte-to-rune mapping (deferred).
type byteLevelPreTok struct {
	addPrefixSpace bool
	re             matcher // nil when use_regex is false
}

func (t *byteLevelPreTok) split(p piece, dst []piece, sc *encodeScratch) []piece {
	if t.addPrefixSpace && !strings.HasPrefix(p.s, " ") {
		p.s = " " + p.s
	}
	start := len(dst)
	if t.re != nil {
		dst = splitPieceByMatches(p, t.re, splitIsolated, false, dst, sc)
	} else {
		dst = append(dst, p)
	}
	for i := start; i < len(dst); i++ {
		dst[i].byteLevel = true
	}
	return dst
}

type prependScheme uint8

const (
	prependAlways prependScheme = iota
	prependFirst
	prependNever
)

type metaspacePreTok struct {
	repl    rune
	replStr string
	scheme  prependScheme
	splitOn bool
}

func (t *metaspacePreTok) split(p piece, dst []piece, sc *encodeScratch) []piece {
	s := strings.ReplaceAll(p.s, " ", t.replStr)
	switch t.scheme {
	case prependAlways:
		if !strings.HasPrefix(s, t.replStr) {
			s = t.replStr + s
		}
	case prependFirst:
		if !strings.HasPrefix(s, t.replStr) && p.origin {
			s = t.replStr + s
		}
	}
	q := piece{s: s, origin: p.origin}
	if !t.splitOn {
		return append(dst, q)
	}
	repl := t.repl
	return splitPieceByRune(q, func(r rune) bool { return r == repl }, splitMergedWithNext, dst, sc)
}

type digitsPreTok struct{ individual bool }

func (t *digitsPreTok) split(p piece, dst []piece, sc *encodeScratch) []piece {
	b := splitContiguous
	if t.individual {
		b = splitIsolated
	}
	return splitPieceByRune(p, unicode.IsNumber, b, dst, sc)
}

// whitespacePreTok keeps the matches of \w+|[^\w\s]+.
type whitespacePreTok struct{}

func (whitespacePreTok) split(p piece, dst []piece, _ *encodeScratch) []piece {
	const (
		none = iota
		word
		other
	)
	s := p.s
	runStart, kind := 0, none
	flush := func(end int) {
		if kind != none {
			dst = append(dst, piece{s: s[runStart:end], byteLevel: p.byteLevel, origin: p.origin && runStart == 0})
		}
	}
	for i, r := range s {
		k := other
		if isWordRune(r) {
			k = word
		} else if unicode.IsSpace(r) {
			k = none
		}
		if k != kind {
			flush(i)
			runStart, kind = i, k
		}
	}
	flush(len(s))
	return dst
}

type whitespaceSplitPreTok struct{}

func (whitespaceSplitPreTok) split(p piece, dst []piece, sc *encodeScratch) []piece {
	return splitPieceByRune(p, unicode.IsSpace, splitRemoved, dst, sc)
}

func isPunctuation(r rune) bool {
	return (r < utf8.RuneSelf && unicode.IsPunct(r)) || (r < utf8.RuneSelf && unicode.IsSymbol(r)) || unicode.IsPunct(r)
}

type punctuationPreTok struct{ behavior splitBehavior }

func (t *punctuationPreTok) split(p piece, dst []piece, sc *encodeScratch) []piece {
	return splitPieceByRune(p, isPunctuation, t.behavior, dst, sc)
}

// bertPreTok splits on whitespace, then isolates punctuation.
type bertPreTok struct{}

func (bertPreTok) split(p piece, dst []piece, sc *encodeScratch) []piece {
	start := len(dst)
	dst = splitPieceByRune(p, unicode.IsSpace, splitRemoved, dst, sc)
	words := append([]piece(nil), dst[start:]...)
	dst = dst[:start]
	for _, w := range words {
		dst = splitPieceByRune(w, isPunctuation, splitIsolated, dst, sc)
	}
	return dst
}

type charDelimiterPreTok struct{ delim rune }

func (t *charDelimiterPreTok) split(p piece, dst []piece, sc *encodeScratch) []piece {
	d := t.delim
	return splitPieceByRune(p, func(r rune) bool { return r == d }, splitRemoved, dst, sc)
}
