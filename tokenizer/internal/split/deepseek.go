package split

// scanDigits3 scans `\p{N}{1,3}` (DeepSeekDigitsPattern). Runes that are not
// numbers lie between matches.
func scanDigits3(s string, from, limit int, dst []int) ([]int, int) {
	for i, m := from, 0; i < len(s); {
		c, n := classAt(s, i)
		if c&cN == 0 {
			i += n
			continue
		}
		if m == limit {
			return dst, i
		}
		end := runInMax(s, i+n, cN, 2)
		dst = append(dst, i, end)
		i, m = end, m+1
	}
	return dst, len(s)
}

// scanDeepSeekCJK scans `[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+`
// (DeepSeekCJKPattern).
func scanDeepSeekCJK(s string, from, limit int, dst []int) ([]int, int) {
	for i, m := from, 0; i < len(s); {
		c, n := classAt(s, i)
		if c&cCJK == 0 {
			i += n
			continue
		}
		if m == limit {
			return dst, i
		}
		end := runIn(s, i+n, cCJK)
		dst = append(dst, i, end)
		i, m = end, m+1
	}
	return dst, len(s)
}

// scanDeepSeekWords scans DeepSeekWordsPattern:
//
//	[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|
//	 ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// Numbers, controls and format characters not followed by a letter or mark
// start no alternative and are left between matches.
func scanDeepSeekWords(s string, from, limit int, dst []int) ([]int, int) {
	for i, m := from, 0; i < len(s); {
		end, n := deepSeekWordsAt(s, i)
		if end < 0 {
			i += n
			continue
		}
		if m == limit {
			return dst, i
		}
		dst = append(dst, i, end)
		i, m = end, m+1
	}
	return dst, len(s)
}

// deepSeekWordsAt returns the end of the match at i, or -1, and the length of
// the rune at i.
func deepSeekWordsAt(s string, i int) (end, size int) {
	c0, n0 := classAt(s, i)
	next := i + n0
	var c1 class
	n1 := 0
	if next < len(s) {
		c1, n1 = classAt(s, next)
	}
	if c0&cASCIIPunct != 0 && c1&cASCIIAlpha != 0 {
		return runIn(s, next+n1, cASCIIAlpha), n0
	}
	// [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+: marks may be the optional prefix
	// or start the run; either way the run from i is the same.
	if c0&(cCRLF|cL|cPS) == 0 && c1&(cL|cM) != 0 {
		return runIn(s, next+n1, cL|cM), n0
	}
	if c0&(cL|cM) != 0 {
		return runIn(s, next, cL|cM), n0
	}
	if s[i] == ' ' && c1&cPS != 0 {
		return crlfRunEnd(s, runIn(s, next+n1, cPS)), n0
	}
	if c0&cPS != 0 {
		return crlfRunEnd(s, runIn(s, next, cPS)), n0
	}
	if c0&cSpace != 0 {
		return spaceNewlineAt(s, i), n0
	}
	return -1, n0
}
