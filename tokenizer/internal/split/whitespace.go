package split

// wsRun scans the maximal run of \s starting at i. It returns the end of the
// run, the start of its last rune and the end of its last '\r' or '\n' (0 when
// the run has none).
func wsRun(s string, i int) (end, last, newline int) {
	for end = i; end < len(s); {
		c, n := classAt(s, end)
		if c&cSpace == 0 {
			break
		}
		last = end
		end += n
		if c&cCRLF != 0 {
			newline = end
		}
	}
	return end, last, newline
}

// spaceNewlineAt matches `\s*[\r\n]+|\s+(?!\S)|\s+` at i, where s[i] is \s.
//
// `\s*` first swallows the whole run and then gives runes back until
// `[\r\n]+` can start, so the first alternative ends after the run's last
// CR or LF.
func spaceNewlineAt(s string, i int) int {
	end, last, newline := wsRun(s, i)
	if newline > 0 {
		return newline
	}
	return spaceTail(s, i, end, last)
}

// spaceAt matches `\s+(?!\S)|\s+` at i, where s[i] is \s.
func spaceAt(s string, i int) int {
	end, last, _ := wsRun(s, i)
	return spaceTail(s, i, end, last)
}

// spaceTail resolves `\s+(?!\S)|\s+` for the whitespace run [i,end) whose
// last rune starts at last. Followed by a non-space, `\s+(?!\S)` backtracks
// one rune so that the last space can prefix the next word; a lone space
// falls through to `\s+`.
func spaceTail(s string, i, end, last int) int {
	if end == len(s) || last == i {
		return end
	}
	return last
}
