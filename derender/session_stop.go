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
	// buf[:n] is the end of the output, of which the first rel bytes are
	// released; pend is the number of characters in buf[rel:n]. buf
	// itself changes only when it is full: a push writes no pointer, so
	// it needs no GC write barrier.
	buf          []byte
	n, rel, pend int
	// wide is the number of non-ASCII bytes in buf[rel:n]: with none,
	// characters are bytes and the release point needs no walk.
	wide int
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
	st.reserve(len(text))
	base := st.n
	from := base + len(text) - checked // first checked byte
	best, bestEnd := int32(-1), 0
	if check && checked > 0 && st.ac.empty >= 0 {
		// An empty stop matches after the first new character.
		_, size := utf8.DecodeRuneInString(text[len(text)-checked:])
		best, bestEnd = st.ac.empty, from+size
	}
	// One pass over the new bytes: each is stored in buf (no separate
	// copy call), counted as a character unless it continues one, and
	// fed to the automaton.
	dst := st.buf[base:][:len(text)]
	a, state, runes, wide := st.ac, st.state, 0, 0
	dfa, cur := a.dfa, a.nodes[state].dfa
	for i := 0; i < len(text); i++ {
		b := text[i]
		dst[i] = b
		runes += int((b >> 7) ^ 1 | (b>>6)&1) // no branch: 10xxxxxx continues
		wide += int(b >> 7)
		if next := dfa[int(cur)<<8|int(b)]; next != 0 {
			cur = next // the common step: a known transition, no match
			continue
		}
		if cur != 0 {
			state = a.dfaNode[cur]
		}
		var o int32
		state, cur, o = a.slowStep(state, cur, b)
		dfa = a.dfa // a new row may have moved the table
		if o >= 0 && check && base+i >= from && (best < 0 || o < best) {
			best, bestEnd = o, base+i+1
		}
	}
	if cur != 0 {
		state = a.dfaNode[cur]
	}
	st.state = state
	st.n += len(text)
	if best >= 0 {
		stop := st.stops[best]
		cut := bestEnd - len(stop)
		if st.include {
			cut = bestEnd
		}
		if cut > st.rel {
			out = string(st.buf[st.rel:cut])
		}
		st.buf, st.n, st.rel, st.pend, st.wide = nil, 0, 0, 0, 0
		return out, stop, true
	}
	st.pend += runes
	st.wide += wide
	end := st.n
	switch {
	case final || st.hold == 0:
		st.pend, st.wide = 0, 0
	case st.pend <= st.hold:
		return "", "", false
	case st.wide == 0:
		// ASCII: release all but hold bytes.
		end = st.rel + st.pend - st.hold
		st.pend = st.hold
	default:
		// Release all but hold characters (the release point never moves
		// back: nothing released is held again).
		end = st.rel
		for n := st.pend - st.hold; n > 0; n-- {
			if st.buf[end] >= 0x80 {
				st.wide--
			}
			for end++; end < st.n && st.buf[end]&0xC0 == 0x80; end++ {
				st.wide--
			}
		}
		st.pend = st.hold
	}
	if end == st.rel {
		return "", "", false
	}
	// No copy per push: buf's bytes are never written again (see
	// reserve), so the released text can be a string over them.
	out = unsafe.String(&st.buf[st.rel], end-st.rel)
	st.rel = end
	return out, "", false
}

// reserve makes room for n more bytes in buf without ever writing over
// bytes already there: released text is handed out as strings over them.
// When buf is full the unreleased part moves to a new array eight times
// its size, so a byte is copied a seventh of a time on average and an
// allocation serves thousands of tokens (twice its size copied every byte
// once and allocated every few hundred tokens, a fifth of a long stop's
// per-token cost); the old array lives as long as the strings.
func (st *stopText) reserve(n int) {
	if st.n+n > len(st.buf) {
		keep := st.buf[st.rel:st.n]
		nb := make([]byte, max(8*(len(keep)+n), 256))
		st.n = copy(nb, keep)
		st.buf, st.rel = nb, 0
	}
}
