package tokenizer

import "github.com/vrender/vrender/tokenizer/internal/split"

// fastSplit adapts a hand-written scanner of package split to matcher.
type fastSplit split.Scan

func (f fastSplit) find(s string, dst []int) []int {
	dst, _ = f(s, 0, -1, dst)
	return dst
}

func (f fastSplit) findFrom(s string, from, limit int, dst []int) ([]int, int) {
	return f(s, from, limit, dst)
}

// lookupFastSplit returns the hand-written scanner of a known Split regex;
// other patterns go through regexp2.
func lookupFastSplit(pattern string) (matcher, bool) {
	f, ok := split.LookupScan(pattern)
	if !ok {
		return nil, false
	}
	return fastSplit(f), true
}
