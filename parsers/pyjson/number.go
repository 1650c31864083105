package pyjson

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

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
		// The sign is not a digit for CPython's limit.
		if n := len(strings.TrimPrefix(s, "-")); n > pyfmt.MaxIntDigits {
			return dst, intDigitsErr(n)
		}
		return append(dst, s...), nil
	}
	// Out-of-range literals parse to ±Inf or 0 as in Python; ParseFloat's
	// range error carries the same value, so it is not an error here.
	return AppendFloat(dst, parseFloat(s)), nil
}

// ParseFloat is Python's float(s) for a decimal literal s already checked
// to be [+-]?digits[.digits][(e|E)[+-]?digits] (either digit run of the
// mantissa may be empty, not both), correctly rounded at any length.
func ParseFloat(s string) float64 { return parseFloat(s) }

// parseFloat is Python's float(s) for a valid JSON float literal s.
// strconv.ParseFloat saturates a long exponent, so a mantissa of many
// thousand digits offset by a large negative exponent ("333…3e-1000000")
// comes out as 0 where Python's correctly rounded result is 0.333…; a long
// literal is therefore rewritten as 0.DIGITS e N, with N small, first.
func parseFloat(s string) float64 {
	if len(s) <= 32 {
		// Too short for the exponent to saturate against the mantissa.
		f, _ := strconv.ParseFloat(s, 64)
		return f
	}
	return parseLongFloat(s)
}

// parseLongFloat is parseFloat for a literal of any length, in linear time.
func parseLongFloat(s string) float64 {
	neg := s[0] == '-'
	if neg || s[0] == '+' {
		s = s[1:]
	}
	mant, exp := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp = s[:i], s[i+1:]
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	// The value is 0.digits × 10^point.
	point := int64(len(intPart)-(len(intPart)+len(frac)-len(digits))) + expValue(exp)
	var f float64
	switch {
	case digits == "":
		f = 0
	case point > 400:
		f = math.Inf(1)
	case point < -400:
		f = 0
	default:
		f, _ = strconv.ParseFloat("0."+digits+"e"+strconv.FormatInt(point, 10), 64)
	}
	if neg {
		f = -f
	}
	return f
}

// expValue is the value of an exponent's text ([-+]?\d*), saturated far
// beyond where any float is finite and non-zero.
func expValue(s string) int64 {
	sign := int64(1)
	if s != "" && (s[0] == '-' || s[0] == '+') {
		if s[0] == '-' {
			sign = -1
		}
		s = s[1:]
	}
	var e int64
	for i := 0; i < len(s) && e < 1<<40; i++ {
		e = e*10 + int64(s[i]-'0')
	}
	return sign * e
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

// ErrIntDigits is wrapped (with ErrSyntax) by the error for an integer
// literal over CPython's digit limit. Python raises a plain ValueError
// there, not the JSONDecodeError of a syntax error, for callers that
// must tell the two apart.
//
//lint:ignore ST1005 CPython's message, byte for byte
var ErrIntDigits = errors.New("Exceeds the limit (4300 digits) for integer string conversion")

// intDigitsErr is CPython's error for an n-digit integer string (json.loads
// of such a literal raises it).
func intDigitsErr(n int) error { return fmt.Errorf("%w: %w", ErrSyntax, intDigitsError(n)) }

// intDigitsError is CPython's message for an n-digit integer; it is
// ErrIntDigits.
type intDigitsError int

func (e intDigitsError) Error() string        { return pyfmt.IntDigitsMessage(int(e)) }
func (e intDigitsError) Is(target error) bool { return target == ErrIntDigits }

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

// numberRun returns the length of src's prefix that the machine, now
// inside a number, would add to the number's text (0 outside a number).
func (v *Value) numberRun(src string) int {
	if v.state != stNumber {
		return 0
	}
	i := 0
	for i < len(src) && isNumberByte(src[i]) {
		i++
	}
	return i
}
