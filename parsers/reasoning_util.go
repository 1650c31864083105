package parsers

import (
	"bytes"
	"unicode"
	"unicode/utf8"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/statecodec"
)

// Helpers shared by the reasoning machines.

// pyWhitespace is Python's str.isspace for one character: Unicode White_Space
// plus the ASCII separators U+001C..U+001F.
func pyWhitespace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}

// pySpaceSuffix is the length in bytes of the longest suffix of s that
// Python's str.rstrip() would remove.
func pySpaceSuffix(s string) int {
	n := len(s)
	for n > 0 {
		r, w := utf8.DecodeLastRuneInString(s[:n])
		if r == utf8.RuneError && w <= 1 || !pyWhitespace(r) {
			break
		}
		n -= w
	}
	return len(s) - n
}

// kwargTruthy reads a chat_template_kwargs entry with Python truthiness;
// present is false when the key is absent or null (Python's dict.get
// returning None).
func (r *Request) kwargTruthy(name string) (value, present bool) {
	v, ok := r.ChatTemplateKwargs.Get(name)
	if !ok || v.IsNull() {
		return false, false
	}
	return pylax.TruthyNode(v), true
}

// holdScan finds markers in text that is kept whole (machines that may
// only decide at the end what earlier text was). Each search resumes where
// the previous one stopped, less a marker's length, so repeated searches
// over a growing buffer cost O(new text) each.
type holdScan struct {
	// next is the first offset at which a marker may still start.
	next int
}

// find returns the earliest occurrence at or after Next of one of markers
// in buf (the longest marker on a tie), or -1. After a miss, Next moves to
// the first offset a later, longer buf could match at.
func (h *holdScan) find(buf []byte, markers []string) (int, string) {
	best, bestMk := -1, ""
	longest := 0
	for _, mk := range markers {
		longest = max(longest, len(mk))
		if i := bytes.Index(buf[h.next:], []byte(mk)); i >= 0 {
			i += h.next
			if best < 0 || i < best || i == best && len(mk) > len(bestMk) {
				best, bestMk = i, mk
			}
		}
	}
	if best < 0 {
		h.next = max(h.next, len(buf)-longest+1)
	}
	return best, bestMk
}

// seek moves the search to offset at (after a marker was consumed).
func (h *holdScan) seek(at int) { h.next = at }

// codec saves and restores the state of a holdScan.
func (h *holdScan) codec(c *statecodec.Codec) {
	c.Int(&h.next)
}
