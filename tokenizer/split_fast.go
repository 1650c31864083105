package tokenizer

import "github.com/vrender/vrender/tokenizer/internal/split"

// fastSplit adapts a hand-written scanner of package split to matcher.
type fastSplit split.Func

func (f fastSplit) find(s string, dst []int) []int { return f(s, dst) }

// lookupFastSplit returns the hand-written scanner of a known Split regex;
// other patterns go through regexp2.
func lookupFastSplit(pattern string) (matcher, bool) {
	f, ok := split.Lookup(pattern)
	if !ok {
		return nil, false
	}
	return fastSplit(f), true
}
