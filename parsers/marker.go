package parsers

import "strings"

// markerScan finds markers in pushed text without re-reading old input: it
// holds back only the longest tail that is a proper prefix of some marker.
type markerScan struct {
	// Held is text not yet handed out because it may start a marker.
	Held string
}

// next looks for the earliest marker in Held+text. When one is found it
// returns the text before it and the marker, and keeps the text after it
// as rest for the caller to feed again (the caller's state may change what
// counts as a marker). Otherwise it returns the text that is certainly not
// part of a marker and holds back the rest.
func (m *markerScan) next(text string, markers []string) (before, marker, rest string) {
	s := text
	if m.Held != "" {
		s = m.Held + text
		m.Held = ""
	}
	best, bestLen := -1, 0
	for _, mk := range markers {
		if i := strings.Index(s, mk); i >= 0 && (best < 0 || i < best || i == best && len(mk) > bestLen) {
			best, bestLen = i, len(mk)
		}
	}
	if best >= 0 {
		return s[:best], s[best : best+bestLen], s[best+bestLen:]
	}
	keep := partialTail(s, markers)
	m.Held = s[len(s)-keep:]
	return s[:len(s)-keep], "", ""
}

// flush hands out whatever is held back.
func (m *markerScan) flush() string {
	s := m.Held
	m.Held = ""
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
