package parity

import (
	"fmt"
	"slices"
)

// tokenWindow is how many tokens a token-ID difference shows on each side
// of the first differing position.
const tokenWindow = 8

// compareIDs reports where two token ID lists first differ, with a window
// of ids around that position decoded as text on both sides (decode may be
// nil). It returns nil when the lists are equal.
func compareIDs(want, got []int, decode func([]int) (string, error)) *Difference {
	if slices.Equal(want, got) {
		return nil
	}
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	return &Difference{Field: "token_ids", Detail: fmt.Sprintf(
		"first difference at position %d (lengths %d and %d): vLLM %s, vrender %s",
		i, len(want), len(got), idWindow(want, i, decode), idWindow(got, i, decode))}
}

// idWindow shows ids[at-tokenWindow : at+tokenWindow] and its text; the id
// at the differing position is bracketed.
func idWindow(ids []int, at int, decode func([]int) (string, error)) string {
	lo, hi := max(0, at-tokenWindow), min(len(ids), at+tokenWindow)
	s := "["
	if lo > 0 {
		s += "… "
	}
	for i := lo; i < hi; i++ {
		if i > lo {
			s += " "
		}
		if i == at {
			s += fmt.Sprintf(">%d<", ids[i])
		} else {
			s += fmt.Sprint(ids[i])
		}
	}
	if hi < len(ids) {
		s += " …"
	}
	s += "]"
	if decode == nil {
		return s
	}
	// The text before and from the differing position, decoded apart, so
	// the reader sees exactly where the prompts part.
	before, err1 := decode(ids[lo:min(at, hi)])
	after, err2 := decode(ids[min(at, hi):hi])
	if err1 != nil || err2 != nil {
		return s + " (not decodable)"
	}
	return fmt.Sprintf("%s %q|%q", s, before, after)
}
