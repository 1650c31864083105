package pyjson

import (
	"math"
	"strconv"
	"strings"
)

// appendNumber validates s against json.loads' number grammar
// -?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)? and writes what json.dumps writes for
// the parsed value: integers exactly, floats as Python's repr.
func appendNumber(dst []byte, s string) ([]byte, error) {
	isFloat, ok := scanNumber(s)
	if !ok {
		return dst, syntaxErr("invalid number %q", s)
	}
	if !isFloat {
		if s == "-0" {
			return append(dst, '0'), nil
		}
		return append(dst, s...), nil
	}
	// Out-of-range literals parse to ±Inf or 0 as in Python; ParseFloat's
	// range error carries the same value, so it is not an error here.
	f, _ := strconv.ParseFloat(s, 64)
	return AppendFloat(dst, f), nil
}

// scanNumber reports whether s is a complete JSON number and whether it has
// a fraction or an exponent (Python parses those as float).
func scanNumber(s string) (isFloat, ok bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - j
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if digits() == 0 {
		return false, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		isFloat = true
		if digits() == 0 {
			return false, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		isFloat = true
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false, false
		}
	}
	return isFloat, i == len(s)
}

// AppendFloat writes f as Python's repr(float) (and so json.dumps) does:
// the shortest round-tripping digits, fixed notation for decimal exponents
// in [-4, 16), ".0" on whole numbers, otherwise d.ddde±XX.
func AppendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // -d.dddde±XX
	neg := e[0] == '-'
	if neg {
		e = e[1:]
	}
	mant, expText, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expText)
	digits := strings.Replace(mant, ".", "", 1)
	if neg {
		dst = append(dst, '-')
	}
	decpt := exp + 1 // value = 0.digits × 10^decpt
	if decpt > -4 && decpt <= 16 {
		switch {
		case decpt <= 0:
			dst = append(dst, "0."...)
			dst = append(dst, strings.Repeat("0", -decpt)...)
			return append(dst, digits...)
		case decpt >= len(digits):
			dst = append(dst, digits...)
			dst = append(dst, strings.Repeat("0", decpt-len(digits))...)
			return append(dst, ".0"...)
		default:
			dst = append(dst, digits[:decpt]...)
			dst = append(dst, '.')
			return append(dst, digits[decpt:]...)
		}
	}
	dst = append(dst, digits[0])
	if len(digits) > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:]...)
	}
	dst = append(dst, 'e')
	if exp < 0 {
		dst = append(dst, '-')
		exp = -exp
	} else {
		dst = append(dst, '+')
	}
	if exp < 10 {
		dst = append(dst, '0')
	}
	return strconv.AppendInt(dst, int64(exp), 10)
}
