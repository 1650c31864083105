package split

import (
	"unicode"
	"unicode/utf8"
)

// class is the set of character classes, out of those the patterns use, that
// one rune belongs to. Looking a rune up once and testing masks keeps every
// class test in the scanners a table load and an AND.
type class uint16

const (
	cLu class = 1 << iota
	cLl
	cLt
	cLm
	cLo
	cM          // Mark: Mn, Mc, Me.
	cN          // Number: Nd, Nl, No.
	cP          // Punctuation.
	cS          // Symbol.
	cSpace      // Oniguruma's Unicode \s: the White_Space property.
	cCRLF       // '\r' or '\n'.
	cASCIIPunct // DeepSeek's [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~].
	cASCIIAlpha // [A-Za-z].
	cCJK        // DeepSeek's [\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff].
)

const (
	cL = cLu | cLl | cLt | cLm | cLo
	// cUpperish is o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}].
	cUpperish = cLu | cLt | cLm | cLo | cM
	// cLowerish is o200k's [\p{Ll}\p{Lm}\p{Lo}\p{M}].
	cLowerish = cLl | cLm | cLo | cM
	cPS       = cP | cS
)

// cMultiByte marks, in byteClasses, the lead and continuation bytes of
// multi-byte runes: the rune must be decoded to be classified.
const cMultiByte class = 1 << 15

// Read-only after init. byteClasses classifies ASCII bytes directly, so the
// ASCII fast path of classAt is one load; runeClasses covers the Basic
// Multilingual Plane, and runes above it, rare in text, are looked up in the
// unicode tables.
var (
	byteClasses [256]class
	runeClasses [0x10000]class
)

func init() {
	buildRuneClasses(&runeClasses)
	copy(byteClasses[:utf8.RuneSelf], runeClasses[:utf8.RuneSelf])
	for b := utf8.RuneSelf; b < len(byteClasses); b++ {
		byteClasses[b] = cMultiByte
	}
}

// generalCategories pairs each class bit with its unicode table and with the
// runes Oniguruma, on a newer Unicode version than Go, adds to it (see
// unicode_addendum.go). The general categories are disjoint, which
// astralClass relies on.
var generalCategories = []struct {
	bit             class
	table, addendum *unicode.RangeTable
}{
	{cS, unicode.S, addendumS}, // emoji first: the commonest runes above the BMP
	{cLo, unicode.Lo, addendumLo},
	{cLl, unicode.Ll, addendumLl},
	{cLu, unicode.Lu, addendumLu},
	{cN, unicode.N, addendumN},
	{cM, unicode.M, addendumM},
	{cLm, unicode.Lm, addendumLm},
	{cP, unicode.P, addendumP},
	{cLt, unicode.Lt, addendumLt},
}

func buildRuneClasses(t *[0x10000]class) {
	for _, gc := range generalCategories {
		setTable(t, gc.table, gc.bit)
		setTable(t, gc.addendum, gc.bit)
	}
	setTable(t, unicode.White_Space, cSpace)
	t['\r'] |= cCRLF
	t['\n'] |= cCRLF
	for _, b := range "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~" {
		t[b] |= cASCIIPunct
	}
	for b := 'A'; b <= 'Z'; b++ {
		t[b] |= cASCIIAlpha
		t[b+'a'-'A'] |= cASCIIAlpha
	}
	for _, rg := range [][2]rune{{0x4e00, 0x9fa5}, {0x3040, 0x309f}, {0x30a0, 0x30ff}} {
		for r := rg[0]; r <= rg[1]; r++ {
			t[r] |= cCJK
		}
	}
}

// setTable adds bit to every BMP rune of rt.
func setTable(t *[0x10000]class, rt *unicode.RangeTable, bit class) {
	for _, rg := range rt.R16 {
		for r := uint32(rg.Lo); r <= uint32(rg.Hi); r += uint32(rg.Stride) {
			t[r] |= bit
		}
	}
	for _, rg := range rt.R32 {
		for r := rg.Lo; r <= rg.Hi && r < uint32(len(t)); r += rg.Stride {
			t[r] |= bit
		}
	}
}

// astralClass classifies a rune above the BMP. No rune there is whitespace,
// CR/LF, ASCII or in DeepSeek's CJK ranges, so only the general category counts.
func astralClass(r rune) class {
	for _, gc := range generalCategories {
		if unicode.Is(gc.table, r) || unicode.Is(gc.addendum, r) {
			return gc.bit
		}
	}
	return 0
}

// classAt returns the classes and the byte length of the rune starting at
// s[i]. Invalid UTF-8 decodes as one U+FFFD byte, as utf8.DecodeRuneInString
// does. The equality test and the bare return keep it within the inliner's
// budget, which every scanner loop depends on.
func classAt(s string, i int) (c class, n int) {
	c, n = byteClasses[s[i]], 1
	if c == cMultiByte {
		c, n = multiByteClass(s[i:])
	}
	return
}

// multiByteClass classifies the multi-byte rune at the start of s.
func multiByteClass(s string) (class, int) {
	r, n := utf8.DecodeRuneInString(s)
	if r < rune(len(runeClasses)) {
		return runeClasses[r], n
	}
	return astralClass(r), n
}

// runIn returns the end of the longest run of runes from i that each belong
// to at least one class of mask.
func runIn(s string, i int, mask class) int {
	for i < len(s) {
		// ASCII first: mask never holds cMultiByte, so a multi-byte lead
		// byte falls through to decoding.
		c := byteClasses[s[i]]
		if c&mask != 0 {
			i++
			continue
		}
		if c != cMultiByte {
			return i
		}
		c, n := multiByteClass(s[i:])
		if c&mask == 0 {
			return i
		}
		i += n
	}
	return i
}

// runOutside returns the end of the longest run of runes from i that belong to
// no class of mask.
func runOutside(s string, i int, mask class) int {
	for i < len(s) {
		c, n := classAt(s, i)
		if c&mask != 0 {
			return i
		}
		i += n
	}
	return i
}

// runInMax is runIn limited to at most limit runes.
func runInMax(s string, i int, mask class, limit int) int {
	for ; limit > 0 && i < len(s); limit-- {
		c, n := classAt(s, i)
		if c&mask == 0 {
			return i
		}
		i += n
	}
	return i
}

// crlfRunEnd returns the end of the longest run of '\r' and '\n' from i.
func crlfRunEnd(s string, i int) int {
	for i < len(s) && (s[i] == '\r' || s[i] == '\n') {
		i++
	}
	return i
}
