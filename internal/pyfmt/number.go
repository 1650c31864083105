package pyfmt

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// AppendNumberLiteral appends Python's str (equal to its repr) of the value
// json.loads makes of the JSON number literal lit: an arbitrary-precision
// int when lit has no '.', 'e' or 'E' (so "-0" becomes "0"), otherwise a
// float, where out-of-range literals become inf or 0.0 as in Python. It
// reports false, appending nothing, when lit does not parse; callers decide
// what to print then.
func AppendNumberLiteral(dst []byte, lit string) ([]byte, bool) {
	if !strings.ContainsAny(lit, ".eE") {
		n, ok := new(big.Int).SetString(lit, 10)
		if !ok {
			return dst, false
		}
		return n.Append(dst, 10), true
	}
	// ParseFloat's range error carries ±Inf, which is what Python makes of
	// an overflowing literal, so only other errors reject lit.
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !math.IsInf(f, 0) {
		return dst, false
	}
	return AppendFloatRepr(dst, f), true
}
