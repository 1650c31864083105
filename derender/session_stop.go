package derender

import "unicode/utf8"

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
	// buf is the end of the output, of which the first rel bytes (rs
	// runes) are released; starts holds the byte offset of each rune.
	buf     []byte
	starts  []int
	rel, rs int
}

func newStopText(cfg StopConfig) *stopText {
	if len(cfg.Stop) == 0 {
		return nil
	}
	longest := 0
	for _, s := range cfg.Stop {
		longest = max(longest, utf8.RuneCountInString(s))
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
	base := len(st.buf)
	st.buf = append(st.buf, text...)
	for i := range text {
		st.starts = append(st.starts, base+i)
	}
	from := len(st.buf) - checked // first checked byte
	best, bestEnd := int32(-1), 0
	if check && checked > 0 && st.ac.empty >= 0 {
		// An empty stop matches after the first new character.
		_, size := utf8.DecodeRune(st.buf[from:])
		best, bestEnd = st.ac.empty, from+size
	}
	a, state := st.ac, st.state
	for i := 0; i < len(text); i++ {
		state = a.next(state, text[i])
		if o := a.out[state]; o >= 0 && check && base+i >= from && (best < 0 || o < best) {
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
		st.buf, st.starts, st.rel, st.rs = nil, nil, 0, 0
		return out, stop, true
	}
	end, k := len(st.buf), len(st.starts)
	if !final {
		// Release up to hold characters before the end, never moving back.
		k = max(len(st.starts)-st.hold, st.rs)
		end = st.rel
		if k < len(st.starts) {
			end = max(end, st.starts[k])
		} else {
			end = len(st.buf)
		}
	}
	out = string(st.buf[st.rel:end])
	st.rel, st.rs = end, k
	if st.rel > len(st.buf)/2 {
		// Compact only when the released part is at least half, so the
		// copying is amortised O(1) per byte.
		n := copy(st.buf, st.buf[st.rel:])
		st.buf = st.buf[:n]
		m := copy(st.starts, st.starts[st.rs:])
		st.starts = st.starts[:m]
		for j := range st.starts {
			st.starts[j] -= st.rel
		}
		st.rel, st.rs = 0, 0
	}
	return out, "", false
}
