package split

// Func appends, for every non-overlapping leftmost match of the pattern in s, the byte offsets start,end to dst
// (Oniguruma find_iter semantics, as HF tokenizers' Split pre-tokenizer sees them) and returns dst.
type Func func(s string, dst []int) []int

// Lookup returns the hand-written scanner for an exact pattern string as it appears in tokenizer.json.
func Lookup(pattern string) (Func, bool) {
	f, ok := scanners[pattern]
	if !ok {
		return nil, false
	}
	return func(s string, dst []int) []int {
		dst, _ = f(s, 0, -1, dst)
		return dst
	}, true
}
