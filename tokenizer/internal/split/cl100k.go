package split

// scanQwen3 scans Qwen3Pattern: cl100k with one digit per match.
func scanQwen3(s string, from, limit int, dst []int) ([]int, int) {
	return scanCl100kFamily(s, from, limit, dst, 1)
}

// scanCl100k scans Cl100kPattern: digits in groups of up to three.
func scanCl100k(s string, from, limit int, dst []int) ([]int, int) {
	return scanCl100kFamily(s, from, limit, dst, 3)
}

// scanCl100kFamily scans
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,maxDigits}|
//	 ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// Every rune is a letter, a number, whitespace or else, and each kind starts
// some alternative, so the matches tile s.
func scanCl100kFamily(s string, from, limit int, dst []int, maxDigits int) ([]int, int) {
	for i, n := from, 0; i < len(s); n++ {
		if n == limit {
			return dst, i
		}
		end := cl100kAt(s, i, maxDigits)
		dst = append(dst, i, end)
		i = end
	}
	return dst, len(s)
}

func cl100kAt(s string, i, maxDigits int) int {
	if s[i] == '\'' {
		if end := contractionFoldAt(s, i); end > 0 {
			return end
		}
	}
	c0, n0 := classAt(s, i)
	next := i + n0
	// [^\r\n\p{L}\p{N}]?\p{L}+: the optional rune is never a letter, so a
	// letter at i starts the run itself.
	if c0&cL != 0 {
		return runIn(s, next, cL)
	}
	var c1 class
	if next < len(s) {
		var n1 int
		c1, n1 = classAt(s, next)
		if c0&(cCRLF|cN) == 0 && c1&cL != 0 {
			return runIn(s, next+n1, cL)
		}
	}
	if c0&cN != 0 {
		return runInMax(s, next, cN, maxDigits-1)
	}
	// ` ?[^\s\p{L}\p{N}]+[\r\n]*`: a space must be the optional prefix, as it
	// is not in the class itself.
	const notPunct = cSpace | cL | cN
	if s[i] == ' ' && next < len(s) && c1&notPunct == 0 {
		return crlfRunEnd(s, runOutside(s, next, notPunct))
	}
	if c0&notPunct == 0 {
		return crlfRunEnd(s, runOutside(s, next, notPunct))
	}
	return spaceNewlineAt(s, i)
}
