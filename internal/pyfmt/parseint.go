package pyfmt

import (
	"strconv"
	"strings"
)

// ParseInt is Python's int(s) for a str in base 10: surrounding whitespace, a
// sign, and single underscores between ASCII digits. Text int() refuses is
// strconv.ErrSyntax; a value beyond int64, which Python keeps, is clamped and
// strconv.ErrRange, as strconv.ParseInt does.
func ParseInt(s string) (int64, error) {
	t := strings.TrimFunc(s, isPySpace)
	digits := strings.TrimLeft(t, "+-")
	if len(t)-len(digits) > 1 || digits == "" || digits[0] == '_' || digits[len(digits)-1] == '_' ||
		strings.Contains(digits, "__") || strings.Trim(digits, "0123456789_") != "" {
		return 0, &strconv.NumError{Func: "ParseInt", Num: s, Err: strconv.ErrSyntax}
	}
	n, err := strconv.ParseInt(t[:len(t)-len(digits)]+strings.ReplaceAll(digits, "_", ""), 10, 64)
	if err != nil {
		return n, &strconv.NumError{Func: "ParseInt", Num: s, Err: strconv.ErrRange}
	}
	return n, nil
}

// isPySpace is str.strip()'s ASCII whitespace, with the file, group,
// record and unit separators Python counts as whitespace.
func isPySpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f' || (r >= 0x1c && r <= 0x1f)
}
