package derender

import (
	"unicode/utf8"
	"unsafe"
)

// StopConfig is the part of a request that ends a choice on its text or
// its last token, enforced in-process because a tokens-only engine refuses
// stop strings. It mirrors what vLLM's engine-side detokenizer and stop
// checker read from SamplingParams.
type StopConfig struct {
	// Stop are the client's stop strings (sampling_params.stop).
	Stop []string
	// IncludeInOutput is include_stop_str_in_output: the matched string (or
	// the stop token's text) stays in the output, and nothing is held back.
	IncludeInOutput bool
	// MinTokens is min_tokens: no stop string may match in the text of the
	// first MinTokens tokens.
	MinTokens int
	// EOS is the primary EOS id the engine stops on (nil with ignore_eos);
	// a stop on it has stop_reason null.
	EOS *int
	// StopTokenIDs are the engine's merged stop_token_ids; a stop on one of
	// them reports the id as stop_reason.
	StopTokenIDs []int
}

// stopText is vLLM's BaseIncrementalDetokenizer output side: it checks the
// stop strings on newly decoded text (check_stop_strings), truncates at a
// match, and holds back the last max(len(stop))-1 characters while
// streaming so a partial match is never sent. The search runs an
// Aho-Corasick automaton over new bytes only and the buffer keeps only
// unreleased text, so a push costs O(len(text)) whatever the stops.
type stopText struct {
	stops   []string
	include bool
	ac      *stopAutomaton
	state   int32
	// hold is the number of characters held back (0 with IncludeInOutput).
	hold int
	// buf is the end of the output, of which the first rel bytes are
	// released; pend is the number of characters in buf[rel:].
	buf       []byte
	rel, pend int
}

func newStopText(cfg StopConfig) *stopText {
	if len(cfg.Stop) == 0 {
		return nil
	}
	longest := 0
	for _, s := range cfg.Stop {
		if len(s) > longest { // no more characters than bytes: skip the count
			longest = max(longest, utf8.RuneCountInString(s))
		}
	}
	st := &stopText{stops: cfg.Stop, include: cfg.IncludeInOutput, ac: newStopAutomaton(cfg.Stop)}
	if !cfg.IncludeInOutput {
		st.hold = max(longest-1, 0)
	}
	return st
}

// push appends text, of which the last checked bytes are searched (the
// text of tokens past min_tokens); it returns the text now released and
// the stop string that matched, if any. final releases everything.
//
// A match counts when it ends in the checked bytes, as check_stop_strings
// searches from 1-new-len(stop) characters back; among those the lowest
// stop index wins, at its first end, as vLLM's loop over the stops does.
func (st *stopText) push(text string, checked int, check, final bool) (out string, matched string, ok bool) {
	st.appendText(text)
	base := len(st.buf) - len(text)
	from := len(st.buf) - checked // first checked byte
	best, bestEnd := int32(-1), 0
	if check && checked > 0 && st.ac.empty >= 0 {
		// An empty stop matches after the first new character.
		_, size := utf8.DecodeRune(st.buf[from:])
		best, bestEnd = st.ac.empty, from+size
	}
	a, state, runes := st.ac, st.state, 0
	for i := 0; i < len(text); i++ {
		b := text[i]
		if b&0xC0 != 0x80 {
			runes++
		}
		var o int32
		if state == 0 {
			// Most output bytes leave or never enter the trie: the root's
			// children have their fail links from the start.
			if state = a.rows[b]; state == 0 {
				continue
			}
			o = a.nodes[state].out
		} else {
			key := uint32(state)<<8 | uint32(b)
			m := &a.memo[(key*0x9E3779B1)>>(32-memoBits)]
			if m.key != key {
				a.fill(m, key, state, b)
			}
			state, o = m.to, m.out
		}
		if o >= 0 && check && base+i >= from && (best < 0 || o < best) {
			best, bestEnd = o, base+i+1
		}
	}
	st.state = state
	if best >= 0 {
		stop := st.stops[best]
		cut := bestEnd - len(stop)
		if st.include {
			cut = bestEnd
		}
		if cut > st.rel {
			out = string(st.buf[st.rel:cut])
		}
		st.buf, st.rel, st.pend = nil, 0, 0
		return out, stop, true
	}
	st.pend += runes
	end := len(st.buf)
	switch {
	case final || st.hold == 0:
		st.pend = 0
	case st.pend <= st.hold:
		return "", "", false
	default:
		// Release all but hold characters (the release point never moves
		// back: nothing released is held again).
		end = st.rel
		for n := st.pend - st.hold; n > 0; n-- {
			for end++; end < len(st.buf) && st.buf[end]&0xC0 == 0x80; end++ {
			}
		}
		st.pend = st.hold
	}
	if end == st.rel {
		return "", "", false
	}
	// No copy per push: buf's bytes are never written again (see
	// appendText), so the released text can be a string over them.
	out = unsafe.String(&st.buf[st.rel], end-st.rel)
	st.rel = end
	return out, "", false
}

// appendText appends text to buf without ever writing over buf's bytes:
// released text is handed out as strings over them. When buf is full the
// unreleased part moves to a new array twice its size, so the copying is
// amortised O(1) per byte and the old array lives as long as the strings.
func (st *stopText) appendText(text string) {
	if len(st.buf)+len(text) > cap(st.buf) {
		keep := st.buf[st.rel:]
		nb := make([]byte, len(keep), max(2*(len(keep)+len(text)), 256))
		copy(nb, keep)
		st.buf, st.rel = nb, 0
	}
	st.buf = append(st.buf, text...)
}
