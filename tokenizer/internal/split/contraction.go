package split

// contractionFoldAt matches (?i:'s|'t|'re|'ve|'m|'ll|'d) at i and returns the
// end of the match, or -1.
//
// Oniguruma folds case with Unicode's case folding, so besides the ASCII
// letters the only rune that folds onto one of s, t, r, e, v, m, l, d is
// U+017F LATIN SMALL LETTER LONG S (ſ → s). The Kelvin sign (→ k) folds onto
// no letter used here. No rune folds onto the two-letter sequences re, ve, ll.
func contractionFoldAt(s string, i int) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return -1
	}
	// OR-ing 0x20 lower-cases an ASCII letter; every other byte maps to a
	// value none of the cases below accepts unless it was that letter's
	// upper or lower case.
	switch s[i+1] | 0x20 {
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r', 'v':
		if i+2 < len(s) && s[i+2]|0x20 == 'e' {
			return i + 3
		}
	case 'l':
		if i+2 < len(s) && s[i+2]|0x20 == 'l' {
			return i + 3
		}
	}
	if s[i+1] == 0xC5 && i+2 < len(s) && s[i+2] == 0xBF { // ſ, U+017F
		return i + 3
	}
	return -1
}

// contractionAt matches the case-sensitive 's|'t|'re|'ve|'m|'ll|'d of the
// GPT-2 pattern at i and returns the end of the match, or -1.
func contractionAt(s string, i int) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return -1
	}
	switch s[i+1] {
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r', 'v':
		if i+2 < len(s) && s[i+2] == 'e' {
			return i + 3
		}
	case 'l':
		if i+2 < len(s) && s[i+2] == 'l' {
			return i + 3
		}
	}
	return -1
}
