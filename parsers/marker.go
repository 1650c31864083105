package parsers

import (
	"strings"

	"github.com/vrender/vrender/internal/statecodec"
)

// markerScan finds markers in pushed text without re-reading old input: it
// holds back only the longest tail that is a proper prefix of some marker.
type markerScan struct {
	// held is text not yet handed out because it may start a marker.
	held string

	// found remembers where markers occur in the rest handed out by the
	// previous call: callers feed that rest straight back, and searching
	// it again for every marker after each marker found would make a push
	// carrying many markers cost quadratic time.
	found markerCache
}

// next looks for the earliest marker in Held+text. When one is found it
// returns the text before it and the marker, and keeps the text after it
// as rest for the caller to feed again (the caller's state may change what
// counts as a marker). Otherwise it returns the text that is certainly not
// part of a marker and holds back the rest.
func (m *markerScan) next(text string, markers []string) (before, marker, rest string) {
	s := text
	if m.held != "" {
		s = m.held + text
		m.held = ""
	}
	if !mayHoldMarker(s, markers) {
		// Most pushes: no byte of s starts a marker, so s holds neither a
		// marker nor a partial one. Known positions stay valid: the cache
		// is keyed by its text.
		return s, "", ""
	}
	best, bestLen := m.found.earliest(s, markers)
	if best >= 0 {
		rest = s[best+bestLen:]
		m.found.advance(rest, best+bestLen)
		return s[:best], s[best : best+bestLen], rest
	}
	m.found.reset()
	keep := partialTail(s, markers)
	m.held = s[len(s)-keep:]
	return s[:len(s)-keep], "", ""
}

// mayHoldMarker reports whether s contains the first byte of one of
// markers: without one, s has no marker and no partial marker.
func mayHoldMarker(s string, markers []string) bool {
	var prev byte
	for j, mk := range markers {
		c := mk[0]
		if j > 0 && c == prev {
			continue // markers often share a first byte ('<')
		}
		prev = c
		if len(s) > 16 {
			if strings.IndexByte(s, c) >= 0 {
				return true
			}
			continue
		}
		// A token's worth of text: a plain loop beats the call.
		for i := 0; i < len(s); i++ {
			if s[i] == c {
				return true
			}
		}
	}
	return false
}

// flush hands out whatever is held back.
func (m *markerScan) flush() string {
	s := m.held
	m.held = ""
	return s
}

// partialTail is the length of the longest suffix of s that is a proper
// prefix of one of markers.
func partialTail(s string, markers []string) int {
	best := 0
	for _, mk := range markers {
		n := min(len(mk)-1, len(s))
		// A partial marker starts with the marker's first byte within the
		// last n bytes; most pushes have none and cost one IndexByte.
		tail := s[len(s)-n:]
		for {
			i := strings.IndexByte(tail, mk[0])
			if i < 0 {
				break
			}
			if k := len(tail) - i; k > best && strings.HasPrefix(mk, tail[i:]) {
				best = k
				break
			}
			tail = tail[i+1:]
		}
	}
	return best
}

// markerCache records, for one text, the first position of each marker
// searched in it (-1: nowhere). A fixed array keeps copies of a machine
// independent of each other.
type markerCache struct {
	text string
	n    int
	at   [16]markerPos
}

type markerPos struct {
	mk string
	i  int
}

// reset forgets everything, clearing only the entries in use (a push
// that found nothing has none).
func (c *markerCache) reset() {
	clear(c.at[:c.n])
	c.text, c.n = "", 0
}

// earliest finds the earliest marker in s (the longest on a tie), reusing
// what is known about s.
func (c *markerCache) earliest(s string, markers []string) (best, bestLen int) {
	if s != c.text {
		c.reset()
		c.text = s
	}
	best = -1
	for _, mk := range markers {
		i, ok := c.lookup(mk)
		if !ok {
			i = strings.Index(s, mk)
			if c.n < len(c.at) {
				c.at[c.n] = markerPos{mk, i}
				c.n++
			}
		}
		if i >= 0 && (best < 0 || i < best || i == best && len(mk) > bestLen) {
			best, bestLen = i, len(mk)
		}
	}
	return best, bestLen
}

func (c *markerCache) lookup(mk string) (int, bool) {
	for _, p := range c.at[:c.n] {
		if p.mk == mk {
			return p.i, true
		}
	}
	return 0, false
}

// advance moves to rest, the text from cut on: positions past the cut
// shift, absences stay, and occurrences the cut passed are forgotten.
func (c *markerCache) advance(rest string, cut int) {
	k := 0
	for _, p := range c.at[:c.n] {
		switch {
		case p.i < 0:
		case p.i >= cut:
			p.i -= cut
		default:
			continue
		}
		c.at[k] = p
		k++
	}
	for j := k; j < c.n; j++ {
		c.at[j] = markerPos{}
	}
	c.text, c.n = rest, k
}

// codec saves and restores the state of a markerScan.
func (m *markerScan) codec(c *statecodec.Codec) {
	c.String(&m.held)
}
