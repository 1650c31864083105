package pyfmt

import "strconv"

// MaxIntDigits is CPython's default sys.int_max_str_digits (3.11+, as vLLM
// runs): int() of a decimal string with more digits raises ValueError, and
// so do json.loads and Jinja2's lexer, which call it. The limit also keeps
// an untrusted literal from costing quadratic time to convert.
const MaxIntDigits = 4300

// IntDigitsMessage is str() of the ValueError CPython raises for an
// n-digit decimal integer string.
func IntDigitsMessage(n int) string {
	return "Exceeds the limit (" + strconv.Itoa(MaxIntDigits) + " digits) for integer string conversion: value has " + strconv.Itoa(n) +
		" digits; use sys.set_int_max_str_digits() to increase the limit"
}
