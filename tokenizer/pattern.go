package tokenizer

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// matcher finds the non-overlapping leftmost matches of a pattern, appending
// start,end byte offset pairs to dst (Oniguruma find_iter semantics).
type matcher interface {
	find(s string, dst []int) []int
	// findFrom is find from byte from on, at most limit matches (limit <
	// 0: all), returning where to resume (len(s) when done); a matcher
	// that cannot resume cheaply returns all.
	findFrom(s string, from, limit int, dst []int) ([]int, int)
}

// literalMatcher matches a fixed string, as HF does by escaping it into a regex.
type literalMatcher struct{ lit string }

func (m literalMatcher) findFrom(s string, from, limit int, dst []int) ([]int, int) {
	for n := 0; n != limit; n++ {
		i := strings.Index(s[from:], m.lit)
		if i < 0 {
			return dst, len(s)
		}
		dst = append(dst, from+i, from+i+len(m.lit))
		from += i + len(m.lit)
	}
	return dst, from
}

func (m literalMatcher) find(s string, dst []int) []int {
	off := 0
	for {
		i := strings.Index(s[off:], m.lit)
		if i < 0 {
			return dst
		}
		dst = append(dst, off+i, off+i+len(m.lit))
		off += i + len(m.lit)
	}
}

// regexMatcher is the general fallback: regexp2 in its default (.NET-like)
// mode, where \s, \w and \d are Unicode-aware like Oniguruma's.
type regexMatcher struct{ re *regexp2.Regexp }

func newRegexMatcher(pattern string) (*regexMatcher, error) {
	re, err := regexp2.Compile(pattern, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("compile regex %q: %w", pattern, err)
	}
	return &regexMatcher{re: re}, nil
}

// findFrom finds every match: regexp2 works on the whole text's runes, so
// resuming would convert the text again for each step.
func (m *regexMatcher) findFrom(s string, from, limit int, dst []int) ([]int, int) {
	if from != 0 {
		return dst, len(s)
	}
	return m.find(s, dst), len(s)
}

func (m *regexMatcher) find(s string, dst []int) []int {
	if s == "" {
		return dst
	}
	runes := []rune(s)
	// byteOff[i] is the byte offset of rune i; regexp2 reports rune indices.
	byteOff := make([]int, len(runes)+1)
	off := 0
	for i, r := range runes {
		byteOff[i] = off
		off += utf8.RuneLen(r)
	}
	byteOff[len(runes)] = off
	start := 0
	lastEnd := -1
	for start <= len(runes) {
		mt, err := m.re.FindRunesMatchStartingAt(runes, start)
		if err != nil || mt == nil {
			return dst
		}
		ms, me := mt.Index, mt.Index+mt.Length
		if ms == me && ms == lastEnd {
			// Like the onig crate: an empty match right after the previous
			// match is skipped by stepping one character forward.
			start++
			continue
		}
		dst = append(dst, byteOff[ms], byteOff[me])
		lastEnd = me
		if me == ms {
			start = me + 1
		} else {
			start = me
		}
	}
	return dst
}

// compilePattern builds the matcher of a tokenizer.json pattern object:
// {"String": s} matches s literally, {"Regex": r} is a regular expression.
func compilePattern(p patternJSON) (matcher, error) {
	switch {
	case p.String != nil && p.Regex == nil:
		if *p.String == "" {
			return newRegexMatcher("")
		}
		return literalMatcher{lit: *p.String}, nil
	case p.Regex != nil && p.String == nil:
		if f, ok := lookupFastSplit(*p.Regex); ok {
			return f, nil
		}
		return newRegexMatcher(*p.Regex)
	default:
		return nil, fmt.Errorf("pattern must have exactly one of String or Regex")
	}
}

// splitSeg is one piece of a string cut by a pattern: a match or the text between matches.
type splitSeg struct {
	start, end int
	match      bool
}

// splitBehavior is HF's SplitDelimiterBehavior.
type splitBehavior uint8

const (
	splitRemoved splitBehavior = iota
	splitIsolated
	splitMergedWithPrevious
	splitMergedWithNext
	splitContiguous
)

func parseSplitBehavior(s string) (splitBehavior, error) {
	switch s {
	case "Removed":
		return splitRemoved, nil
	case "Isolated":
		return splitIsolated, nil
	case "MergedWithPrevious":
		return splitMergedWithPrevious, nil
	case "MergedWithNext":
		return splitMergedWithNext, nil
	case "Contiguous":
		return splitContiguous, nil
	}
	return 0, fmt.Errorf("unknown split behavior %q", s)
}

// segmentsFromMatches turns match offset pairs into the full cover of s
// that HF's Pattern::find_matches returns, flipping the flags for invert.
func segmentsFromMatches(n int, pairs []int, invert bool, dst []splitSeg) []splitSeg {
	prev := 0
	for i := 0; i+1 < len(pairs); i += 2 {
		ms, me := pairs[i], pairs[i+1]
		if prev != ms {
			dst = append(dst, splitSeg{prev, ms, invert})
		}
		dst = append(dst, splitSeg{ms, me, !invert})
		prev = me
	}
	if prev != n {
		dst = append(dst, splitSeg{prev, n, invert})
	}
	return dst
}

// applyBehavior rewrites segs in place into the spans kept by behavior, as
// NormalizedString::split does; returned spans all have match=false.
func applyBehavior(segs []splitSeg, b splitBehavior) []splitSeg {
	out := segs[:0]
	switch b {
	case splitIsolated:
		return segs
	case splitRemoved:
		for _, s := range segs {
			if !s.match {
				out = append(out, s)
			}
		}
	case splitContiguous:
		prevMatch := false
		for _, s := range segs {
			if s.match == prevMatch && len(out) > 0 {
				out[len(out)-1].end = s.end
			} else {
				out = append(out, splitSeg{s.start, s.end, false})
			}
			prevMatch = s.match
		}
	case splitMergedWithPrevious:
		prevMatch := false
		for _, s := range segs {
			if s.match && !prevMatch && len(out) > 0 {
				out[len(out)-1].end = s.end
			} else {
				out = append(out, splitSeg{s.start, s.end, false})
			}
			prevMatch = s.match
		}
	case splitMergedWithNext:
		// Fold from the right, then restore the order.
		prevMatch := false
		w := len(segs)
		for i := len(segs) - 1; i >= 0; i-- {
			s := segs[i]
			if s.match && !prevMatch && w < len(segs) {
				segs[w].start = s.start
			} else {
				w--
				segs[w] = splitSeg{s.start, s.end, false}
			}
			prevMatch = s.match
		}
		return segs[w:]
	}
	return out
}
