package parsers

import (
	"bytes"
	"github.com/vrender/vrender/internal/statecodec"
	"unicode/utf8"
)

// The XML-ish tool formats match tags with regexes whose \s runs and
// name groups are unbounded, so a tag cut off by the end of the input can
// be arbitrarily long. Matching it again from its '<' on every push would
// make a long unfinished tag cost quadratic time; the scanners here keep
// how far they got and resume there, so each byte is examined once.

// tagElem is one element of a tag pattern: a literal, or a run of
// whitespace (Python's \s) that Plus requires to be non-empty.
type tagElem struct {
	lit   string
	space bool
	plus  bool
}

var (
	wsStar = tagElem{space: true}
	wsPlus = tagElem{space: true, plus: true}
)

func lit(s string) tagElem { return tagElem{lit: s} }

// tagScan matches a tag pattern at an anchor (the tag's '<') across
// pushes. Positions are relative to the anchor, so the buffer holding it
// may be compacted while a match is pending.
type tagScan struct {
	// elem is the next pattern element to match; At is where it resumes
	// and From where the current whitespace run began.
	elem int
	at   int
	from int
}

// match resumes the match of pat at s[base]; on tagYes end is where the
// tag ends in s. scanned counts the bytes examined.
func (t *tagScan) match(s []byte, base int, pat []tagElem, scanned *int) (m tagMatch, end int) {
	for t.elem < len(pat) {
		e := pat[t.elem]
		p := base + t.at
		if e.space {
			q, more := spaceRun(s, p)
			*scanned += q - p
			t.at = q - base
			if more {
				return tagMore, 0
			}
			if e.plus && t.at == t.from {
				return tagNo, 0
			}
		} else {
			*scanned += min(len(e.lit), len(s)-p)
			m, q := matchLit(s, p, e.lit)
			if m != tagYes {
				return m, 0
			}
			t.at = q - base
		}
		t.elem++
		t.from = t.at
	}
	return tagYes, base + t.at
}

// spaceRun skips \s from i. more reports that the input ends inside the
// run, or inside a character that may still turn out to be whitespace.
func spaceRun(s []byte, i int) (end int, more bool) {
	for i < len(s) {
		if !utf8.FullRune(s[i:]) {
			return i, true
		}
		r, n := utf8.DecodeRune(s[i:])
		if !pyIsSpace(r) {
			return i, false
		}
		i += n
	}
	return i, true
}

// nameRun skips [^>\s] from i, with more as for spaceRun.
func nameRun(s []byte, i int) (end int, more bool) {
	for i < len(s) {
		if !utf8.FullRune(s[i:]) {
			return i, true
		}
		r, n := utf8.DecodeRune(s[i:])
		if r == '>' || pyIsSpace(r) {
			return i, false
		}
		i += n
	}
	return i, true
}

// byteSearch finds c in s from a resumable position: Pos is where the
// search resumes (relative to an anchor) and Found where c was seen.
type byteSearch struct {
	pos   int
	found bool
}

// find resumes the search for c in s[base+Pos:]; it returns c's position
// in s, or -1 while c has not arrived.
func (b *byteSearch) find(s []byte, base int, c byte, scanned *int) int {
	p := base + b.pos
	if b.found {
		return p
	}
	i := bytes.IndexByte(s[p:], c)
	if i < 0 {
		*scanned += len(s) - p
		b.pos = len(s) - base
		return -1
	}
	*scanned += i + 1
	b.pos += i
	b.found = true
	return p + i
}

// codec saves and restores the state of a byteSearch.
func (b *byteSearch) codec(c *statecodec.Codec) {
	c.Int(&b.pos)
	c.Bool(&b.found)
}

// codec saves and restores the state of a tagScan.
func (t *tagScan) codec(c *statecodec.Codec) {
	c.Int(&t.elem)
	c.Int(&t.at)
	c.Int(&t.from)
}

// check checks a decoded match against the room its buffer has after the
// anchor.
func (t *tagScan) check(c *statecodec.Codec, room int) {
	c.Within(room, t.at, t.from)
	c.Within(t.at, t.from)
	c.Within(maxTagElems, t.elem)
}

// maxTagElems bounds a tag pattern's length (the longest has 7).
const maxTagElems = 16

// check is tagScan.check for a byte search.
func (b *byteSearch) check(c *statecodec.Codec, room int) { c.Within(room, b.pos) }
