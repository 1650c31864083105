package tokenizer

import (
	"encoding/binary"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// normalizer rewrites text before pre-tokenization. Offsets are not tracked:
// encoding needs only the normalized text of each piece, and added tokens
// are matched on the raw or the normalized text, never across the two.
type normalizer interface {
	normalize(s string) string
}

type normalizerSeq []normalizer

func (n normalizerSeq) normalize(s string) string {
	for _, x := range n {
		s = x.normalize(s)
	}
	return s
}

type unicodeNormalizer struct{ form norm.Form }

// normalize asks norm only about the stretches of s that hold non-ASCII
// bytes. Every normalization form maps ASCII to itself, and the point
// before an ASCII character is a boundary in all four forms (ASCII
// characters are starters that never compose with what precedes them),
// so s normalizes piece by piece, each non-ASCII run taken with the ASCII
// character before it (which a combining mark may compose with). Chat
// prompts are mostly ASCII, where norm's own check goes byte by byte.
func (n unicodeNormalizer) normalize(s string) string {
	var b strings.Builder
	done := 0 // s[:done] is written to b, or b is unused and it equals the output
	for i := asciiSpan(s, 0); i < len(s); {
		start := max(i-1, 0)
		end := i + 1
		for end < len(s) && s[end] >= 0x80 {
			end++
		}
		piece := s[start:end]
		if !utf8.ValidString(piece) {
			// norm reads invalid bytes by what follows them; keep its
			// answer for the whole text.
			return n.form.String(s)
		}
		if out := n.form.String(piece); out != piece {
			if b.Cap() == 0 {
				b.Grow(len(s) + len(out) - len(piece) + 16)
			}
			b.WriteString(s[done:start])
			b.WriteString(out)
			done = end
		}
		i = asciiSpan(s, end)
	}
	if b.Cap() == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// asciiSpan returns the index of the first byte of s at or after i that
// is not ASCII (len(s) if none), eight bytes at a time.
func asciiSpan(s string, i int) int {
	for ; i+8 <= len(s); i += 8 {
		w := binary.LittleEndian.Uint64([]byte(s[i : i+8])) // no copy: the compiler loads the string's bytes
		if w&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(s) && s[i] < 0x80; i++ {
	}
	return i
}

type lowercaseNormalizer struct{}

// normalize lowercases rune by rune like Rust's char::to_lowercase: no
// context-dependent final sigma, and U+0130 becomes "i̇".
func (lowercaseNormalizer) normalize(s string) string {
	var b strings.Builder
	for i, r := range s {
		l := unicode.ToLower(r)
		if l == r && r != 0x130 {
			if b.Cap() > 0 {
				b.WriteRune(r)
			}
			continue
		}
		if b.Cap() == 0 {
			b.Grow(len(s) + 8)
			b.WriteString(s[:i])
		}
		if r == 0x130 {
			b.WriteString("i\u0307")
		} else {
			b.WriteRune(l)
		}
	}
	if b.Cap() == 0 {
		return s
	}
	return b.String()
}

type replaceNormalizer struct {
	pattern matcher
	content string
}

func (n replaceNormalizer) normalize(s string) string {
	return replaceMatches(n.pattern, s, n.content)
}

// replaceMatches substitutes content for every match of m in s.
func replaceMatches(m matcher, s, content string) string {
	if lit, ok := m.(literalMatcher); ok {
		return strings.ReplaceAll(s, lit.lit, content)
	}
	pairs := m.find(s, nil)
	if len(pairs) == 0 {
		return s
	}
	var b strings.Builder
	prev := 0
	for i := 0; i+1 < len(pairs); i += 2 {
		b.WriteString(s[prev:pairs[i]])
		b.WriteString(content)
		prev = pairs[i+1]
	}
	b.WriteString(s[prev:])
	return b.String()
}

type prependNormalizer struct{ prefix string }

func (n prependNormalizer) normalize(s string) string {
	if s == "" {
		return s
	}
	return n.prefix + s
}

type stripNormalizer struct{ left, right bool }

func (n stripNormalizer) normalize(s string) string {
	if n.left {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
	}
	if n.right {
		s = strings.TrimRightFunc(s, unicode.IsSpace)
	}
	return s
}

type stripAccentsNormalizer struct{}

func (stripAccentsNormalizer) normalize(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsMark(r) {
			return -1
		}
		return r
	}, s)
}

// byteLevelNormalizer maps every byte to its byte-level rune.
type byteLevelNormalizer struct{}

func (byteLevelNormalizer) normalize(s string) string { return byteLevelEncode(s) }

// bertNormalizer is HF's BertNormalizer.
type bertNormalizer struct {
	cleanText, chineseChars, stripAccents, lowercase bool
}

func (n bertNormalizer) normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if n.cleanText {
			if r == 0 || r == 0xFFFD || isBertControl(r) {
				continue
			}
			if isBertWhitespace(r) {
				r = ' '
			}
		}
		if n.chineseChars && isChineseChar(r) {
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
			continue
		}
		b.WriteRune(r)
	}
	out := b.String()
	if n.stripAccents {
		out = stripAccentsNormalizer{}.normalize(norm.NFD.String(out))
	}
	if n.lowercase {
		out = lowercaseNormalizer{}.normalize(out)
	}
	return out
}

func isBertWhitespace(r rune) bool {
	switch r {
	case '\t', '\n', '\r', ' ':
		return true
	}
	return unicode.Is(unicode.Zs, r)
}

func isBertControl(r rune) bool {
	switch r {
	case '\t', '\n', '\r':
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Cn, unicode.Co)
}

func isChineseChar(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) || (r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) || (r >= 0x2B920 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) || (r >= 0x2F800 && r <= 0x2FA1F)
}
