package pyfmt

import (
	"math"
	"strconv"
)

// AppendFloatRepr appends Python's repr(f), which is also str(f): the
// shortest digits that round trip, positional notation when the decimal
// exponent is in [-4, 16) (with ".0" on whole numbers), otherwise
// d.ddde±XX with at least two exponent digits. Infinities and NaN are
// written "inf", "-inf" and "nan"; json.dumps spells them differently, so
// its callers map those themselves.
func AppendFloatRepr(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case math.IsNaN(f):
		return append(dst, "nan"...)
	}
	if math.Signbit(f) {
		dst = append(dst, '-')
		f = -f
	}
	// Go's shortest form has the same digits as Python's; only the layout
	// differs. sci is "d[.ddd]e±XX".
	var buf, dbuf [32]byte
	sci := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	digits := dbuf[:0]
	i := 0
	for ; sci[i] != 'e'; i++ {
		if sci[i] != '.' {
			digits = append(digits, sci[i])
		}
	}
	exp, _ := strconv.Atoi(string(sci[i+1:]))

	if exp < -4 || exp >= 16 {
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
	point := exp + 1 // digits before the decimal point
	switch {
	case point <= 0:
		dst = append(dst, "0."...)
		dst = appendZeros(dst, -point)
		return append(dst, digits...)
	case point >= len(digits):
		dst = append(dst, digits...)
		dst = appendZeros(dst, point-len(digits))
		return append(dst, ".0"...)
	default:
		dst = append(dst, digits[:point]...)
		dst = append(dst, '.')
		return append(dst, digits[point:]...)
	}
}

func appendZeros(dst []byte, n int) []byte {
	for range n {
		dst = append(dst, '0')
	}
	return dst
}
