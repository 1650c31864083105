package split

// scanO200k scans O200kPattern (gpt-oss):
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// Below, X is [^\r\n\p{L}\p{N}], U the first and W the second bracket class.
// The matches tile s.
func scanO200k(s string, from, limit int, dst []int) ([]int, int) {
	for i, n := from, 0; i < len(s); n++ {
		if n == limit {
			return dst, i
		}
		end := o200kAt(s, i)
		dst = append(dst, i, end)
		i = end
	}
	return dst, len(s)
}

func o200kAt(s string, i int) int {
	c0, n0 := classAt(s, i)
	next := i + n0
	// X is greedy: each word alternative first tries with s[i] as the prefix,
	// then, backtracking, without. Marks are in X as well as in U and W, so
	// both attempts matter.
	inX := c0&(cCRLF|cL|cN) == 0
	if inX {
		if end := o200kLowerAt(s, next); end >= 0 {
			return end
		}
	}
	if c0&(cUpperish|cLowerish) != 0 {
		if end := o200kLowerAt(s, i); end >= 0 {
			return end
		}
	}
	if inX && next < len(s) {
		if c1, _ := classAt(s, next); c1&cUpperish != 0 {
			return o200kUpperAt(s, next)
		}
	}
	if c0&cUpperish != 0 {
		return o200kUpperAt(s, i)
	}
	if c0&cN != 0 {
		return runInMax(s, next, cN, 2)
	}
	// ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
	const notPunct = cSpace | cL | cN
	p := i
	if s[i] == ' ' && next < len(s) {
		p = next
	}
	if c, n := classAt(s, p); c&notPunct == 0 {
		return crlfSlashRunEnd(s, runOutside(s, p+n, notPunct))
	}
	return spaceNewlineAt(s, i)
}

// o200kLowerAt matches U*W+(?i:'s|…)? at p and returns its end, or -1.
//
// U* takes the whole U run first; W+ must then start right after it, or, by
// backtracking, at the last rune of the run that is also in W. In the latter
// case W+ is that rune alone, because what follows it is not in W.
func o200kLowerAt(s string, p int) int {
	lastW := -1 // end of the last rune of the U run that is also in W
	for p < len(s) {
		c, n := classAt(s, p)
		if c&cUpperish == 0 {
			if c&cLowerish != 0 {
				return contractionFoldOr(s, runIn(s, p+n, cLowerish))
			}
			break
		}
		p += n
		if c&cLowerish != 0 {
			lastW = p
		}
	}
	if lastW < 0 {
		return -1
	}
	return contractionFoldOr(s, lastW)
}

// o200kUpperAt matches U+W*(?i:'s|…)? at p, where s[p] is in U; greedy
// quantifiers followed only by optional parts never backtrack.
func o200kUpperAt(s string, p int) int {
	end := runIn(s, runIn(s, p, cUpperish), cLowerish)
	return contractionFoldOr(s, end)
}

// contractionFoldOr matches the optional (?i:'s|'t|'re|'ve|'m|'ll|'d)? at i.
func contractionFoldOr(s string, i int) int {
	if end := contractionFoldAt(s, i); end > 0 {
		return end
	}
	return i
}

// crlfSlashRunEnd returns the end of the longest run of '\r', '\n' and '/'
// from i.
func crlfSlashRunEnd(s string, i int) int {
	for i < len(s) && (s[i] == '\r' || s[i] == '\n' || s[i] == '/') {
		i++
	}
	return i
}
