package pyjson

import (
	"math"
	"strconv"

	"github.com/vrender/vrender/internal/pyfmt"
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

// AppendFloat writes f as json.dumps does: Python's repr(float), with
// json.dumps's own spellings of NaN and the infinities.
func AppendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	return pyfmt.AppendFloatRepr(dst, f)
}
