package parsers

import (
	"bytes"
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
	Lit   string
	Space bool
	Plus  bool
}

var (
	wsStar = tagElem{Space: true}
	wsPlus = tagElem{Space: true, Plus: true}
)

func lit(s string) tagElem { return tagElem{Lit: s} }

// tagScan matches a tag pattern at an anchor (the tag's '<') across
// pushes. Positions are relative to the anchor, so the buffer holding it
// may be compacted while a match is pending.
type tagScan struct {
	// Elem is the next pattern element to match; At is where it resumes
	// and From where the current whitespace run began.
	Elem int
	At   int
	From int
}

// match resumes the match of pat at s[base]; on tagYes end is where the
// tag ends in s. scanned counts the bytes examined.
func (t *tagScan) match(s []byte, base int, pat []tagElem, scanned *int) (m tagMatch, end int) {
	for t.Elem < len(pat) {
		e := pat[t.Elem]
		p := base + t.At
		if e.Space {
			q, more := spaceRun(s, p)
			*scanned += q - p
			t.At = q - base
			if more {
				return tagMore, 0
			}
			if e.Plus && t.At == t.From {
				return tagNo, 0
			}
		} else {
			*scanned += min(len(e.Lit), len(s)-p)
			m, q := matchLit(s, p, e.Lit)
			if m != tagYes {
				return m, 0
			}
			t.At = q - base
		}
		t.Elem++
		t.From = t.At
	}
	return tagYes, base + t.At
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
	Pos   int
	Found bool
}

// find resumes the search for c in s[base+Pos:]; it returns c's position
// in s, or -1 while c has not arrived.
func (b *byteSearch) find(s []byte, base int, c byte, scanned *int) int {
	p := base + b.Pos
	if b.Found {
		return p
	}
	i := bytes.IndexByte(s[p:], c)
	if i < 0 {
		*scanned += len(s) - p
		b.Pos = len(s) - base
		return -1
	}
	*scanned += i + 1
	b.Pos += i
	b.Found = true
	return p + i
}
