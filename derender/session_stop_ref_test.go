package derender

import (
	"strings"
	"unicode/utf8"
)

// naiveStopText is the matcher as it was before the automaton: every
// stop string searched on every push. It is the reference the automaton
// is tested against.
// It is vLLM's BaseIncrementalDetokenizer output side: it checks the
// stop strings on newly decoded text (check_stop_strings), truncates at a
// match, and holds back the last max(len(stop))-1 characters while
// streaming so a partial match is never sent. It keeps only the tail of
// the output a later match can still touch.
type naiveStopText struct {
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

func newNaiveStopText(cfg StopConfig) *naiveStopText {
	if len(cfg.Stop) == 0 {
		return nil
	}
	longest := 0
	for _, s := range cfg.Stop {
		longest = max(longest, utf8.RuneCountInString(s))
	}
	st := &naiveStopText{stops: cfg.Stop, include: cfg.IncludeInOutput, keep: max(longest-1, 0)}
	if !cfg.IncludeInOutput {
		st.hold = st.keep
	}
	return st
}

// push appends text, of which the last checked bytes are searched (the
// text of tokens past min_tokens); it returns the text now released and
// the stop string that matched, if any. final releases everything.
func (st *naiveStopText) push(text string, checked int, check, final bool) (out string, matched string, ok bool) {
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
		end = max(released, naiveBackRunes(s, st.hold))
	}
	out = s[released:end]
	start := naiveBackRunes(s, st.keep)
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
func (st *naiveStopText) search(s string, newBytes int) (cut int, stop string, found bool) {
	newChars := utf8.RuneCountInString(s[len(s)-newBytes:])
	for _, stop := range st.stops {
		back := newChars + utf8.RuneCountInString(stop) - 1
		from := naiveBackRunes(s, back)
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
func naiveBackRunes(s string, n int) int {
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return i
}
