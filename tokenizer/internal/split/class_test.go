package split

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// expectedClass derives a rune's classes straight from the unicode package
// (plus the addendum), independently of the table construction.
func expectedClass(r rune) class {
	var c class
	for _, gc := range []struct {
		bit             class
		table, addendum *unicode.RangeTable
	}{
		{cLu, unicode.Lu, addendumLu}, {cLl, unicode.Ll, addendumLl}, {cLt, unicode.Lt, addendumLt},
		{cLm, unicode.Lm, addendumLm}, {cLo, unicode.Lo, addendumLo}, {cM, unicode.M, addendumM},
		{cN, unicode.N, addendumN}, {cP, unicode.P, addendumP}, {cS, unicode.S, addendumS},
	} {
		if unicode.Is(gc.table, r) || unicode.Is(gc.addendum, r) {
			c |= gc.bit
		}
	}
	if unicode.IsSpace(r) {
		c |= cSpace
	}
	if r == '\r' || r == '\n' {
		c |= cCRLF
	}
	if r < utf8.RuneSelf && (unicode.IsPunct(r) || unicode.IsSymbol(r)) {
		c |= cASCIIPunct
	}
	if 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' {
		c |= cASCIIAlpha
	}
	if 0x4e00 <= r && r <= 0x9fa5 || 0x3040 <= r && r <= 0x309f || 0x30a0 <= r && r <= 0x30ff {
		c |= cCJK
	}
	return c
}

func TestClassOfEveryRune(t *testing.T) {
	var buf []byte
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		buf = utf8.AppendRune(buf[:0], r)
		got, n := classAt(string(buf), 0)
		if want := expectedClass(r); got != want || n != len(buf) {
			t.Fatalf("%U: class %#x size %d, want %#x size %d", r, got, n, want, len(buf))
		}
	}
}

// TestWhiteSpaceIsOnigurumaSpace pins \s to Oniguruma's set (White_Space),
// which is what unicode.IsSpace and the table implement.
func TestWhiteSpaceIsOnigurumaSpace(t *testing.T) {
	want := []rune{'\t', '\n', '\v', '\f', '\r', ' ', 0x85, 0xa0, 0x1680,
		0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a,
		0x2028, 0x2029, 0x202f, 0x205f, 0x3000}
	var got []rune
	var buf []byte
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if utf8.ValidRune(r) {
			buf = utf8.AppendRune(buf[:0], r)
			if c, _ := classAt(string(buf), 0); c&cSpace != 0 {
				got = append(got, r)
			}
		}
	}
	if string(got) != string(want) {
		t.Errorf("whitespace runes %U, want %U", got, want)
	}
}

// TestInvalidUTF8 checks that bytes outside valid UTF-8 are single U+FFFD
// runes (a symbol) rather than a panic or an overrun.
func TestInvalidUTF8(t *testing.T) {
	inputs := []string{"\xff", "a\xc5", "\xe4\xb8", "'\xc5", "'\xc5x", "\xf0\x9f\x98", strings.Repeat("\x80", 5)}
	for _, tp := range testPatterns {
		f, _ := Lookup(tp.pattern)
		for _, s := range inputs {
			checkWellFormed(t, s, f(s, nil))
		}
	}
}
