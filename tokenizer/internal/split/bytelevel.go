package split

// scanByteLevel scans ByteLevelPattern, GPT-2's
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// whose matches tile s.
func scanByteLevel(s string, from, limit int, dst []int) ([]int, int) {
	for i, n := from, 0; i < len(s); n++ {
		if n == limit {
			return dst, i
		}
		end := byteLevelAt(s, i)
		dst = append(dst, i, end)
		i = end
	}
	return dst, len(s)
}

func byteLevelAt(s string, i int) int {
	if s[i] == '\'' {
		if end := contractionAt(s, i); end > 0 {
			return end
		}
	}
	// The optional space of the next three alternatives belongs to none of
	// their classes, so when s[i] is a space the class run must start after it.
	p := i
	if s[i] == ' ' && i+1 < len(s) {
		p = i + 1
	}
	c, n := classAt(s, p)
	switch {
	case c&cL != 0:
		return runIn(s, p+n, cL)
	case c&cN != 0:
		return runIn(s, p+n, cN)
	case c&cSpace == 0:
		return runOutside(s, p+n, cSpace|cL|cN)
	}
	return spaceAt(s, i)
}
