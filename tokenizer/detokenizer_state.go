package tokenizer

import "fmt"

// MaxPrevTokens is the longest decode window a resumed state may carry.
// vLLM's DerenderStreamState rejects a longer prev_tokens with 400; we
// apply the same limit so a client cannot make a replica do unbounded work
// per token, and so any state we accept vLLM would accept too.
const MaxPrevTokens = 1024

// DetokState is the incremental detokenizer's serialisable state, field
// for field the detokenization part of vLLM's DerenderStreamState.
//
// PrevTokens is the trailing window of token strings the next step still
// reads: vLLM trims it to prev_tokens[prefix_offset:] after every token, so
// PrefixOffset is 0 in every state a step produced (a freshly seeded state
// may carry up to two dead tokens before it, as vLLM's does). The window
// holds the tokens of the last emitted text plus the tokens held back since;
// it only grows while text is being held back (an unfinished UTF-8 sequence,
// out-of-vocabulary ids), never with the length of the output.
type DetokState struct {
	PrevTokens   []string `json:"prev_tokens"`
	PrefixOffset int      `json:"prefix_offset"`
	ReadOffset   int      `json:"read_offset"`
}

// Validate reports whether s could have been produced by the detokenizer.
// vLLM checks only the window length and that the offsets are not
// negative, then relies on Python's forgiving slices; states with
// PrefixOffset > ReadOffset or ReadOffset > len(PrevTokens) are never
// produced by vLLM either, so rejecting them loses no valid stream.
func (s DetokState) Validate() error {
	n := len(s.PrevTokens)
	switch {
	case n > MaxPrevTokens:
		return fmt.Errorf("prev_tokens length (%d) exceeds maximum (%d)", n, MaxPrevTokens)
	case s.PrefixOffset < 0 || s.ReadOffset < 0:
		return fmt.Errorf("negative offset (prefix_offset %d, read_offset %d)", s.PrefixOffset, s.ReadOffset)
	case s.PrefixOffset > s.ReadOffset:
		return fmt.Errorf("prefix_offset %d is past read_offset %d", s.PrefixOffset, s.ReadOffset)
	case s.ReadOffset > n:
		return fmt.Errorf("read_offset %d is past the %d prev_tokens", s.ReadOffset, n)
	}
	return nil
}

// clone returns a copy of s that shares no memory with it. PrevTokens is
// never nil, so the state marshals as `"prev_tokens": []` (vLLM's model
// rejects null).
func (s DetokState) clone() DetokState {
	toks := make([]string, len(s.PrevTokens))
	copy(toks, s.PrevTokens)
	s.PrevTokens = toks
	return s
}
