package derender

import (
	"strings"
	"unicode/utf8"
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
// streaming so a partial match is never sent. It keeps only the tail of
// the output a later match can still touch.
type stopText struct {
	stops   []string
	include bool
	// hold is the number of characters held back (0 with IncludeInOutput).
	hold int
	// keep is how many trailing characters a future search needs.
	keep int
	// tail is the end of the output text; its last held bytes are not
	// released yet.
	tail string
	held int
}

func newStopText(cfg StopConfig) *stopText {
	if len(cfg.Stop) == 0 {
		return nil
	}
	longest := 0
	for _, s := range cfg.Stop {
		longest = max(longest, utf8.RuneCountInString(s))
	}
	st := &stopText{stops: cfg.Stop, include: cfg.IncludeInOutput, keep: max(longest-1, 0)}
	if !cfg.IncludeInOutput {
		st.hold = st.keep
	}
	return st
}

// push appends text, of which the last checked bytes are searched (the
// text of tokens past min_tokens); it returns the text now released and
// the stop string that matched, if any. final releases everything.
func (st *stopText) push(text string, checked int, check, final bool) (out string, matched string, ok bool) {
	s := st.tail + text
	released := len(st.tail) - st.held
	if check && checked > 0 {
		if cut, m, found := st.search(s, checked); found {
			out = ""
			if cut > released {
				out = s[released:cut]
			}
			st.tail, st.held = "", 0
			return out, m, true
		}
	}
	end := len(s)
	if !final {
		end = max(released, backRunes(s, st.hold))
	}
	out = s[released:end]
	start := backRunes(s, st.keep)
	// The released point never moves back: keep everything not released.
	start = min(start, end)
	st.tail = s[start:]
	st.held = len(s) - end
	return out, "", false
}

// search is check_stop_strings over s, whose last newBytes bytes are new:
// each stop string in order is looked for from 1-new-len(stop) characters
// before the end, and the first found decides. It returns the byte offset
// the output is cut to.
func (st *stopText) search(s string, newBytes int) (cut int, stop string, found bool) {
	newChars := utf8.RuneCountInString(s[len(s)-newBytes:])
	for _, stop := range st.stops {
		back := newChars + utf8.RuneCountInString(stop) - 1
		from := backRunes(s, back)
		i := strings.Index(s[from:], stop)
		if i < 0 {
			continue
		}
		i += from
		if st.include {
			i += len(stop)
		}
		return i, stop, true
	}
	return 0, "", false
}

// backRunes is the byte offset n characters before the end of s (0 when s
// is shorter).
func backRunes(s string, n int) int {
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return i
}
