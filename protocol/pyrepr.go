package protocol

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// vLLM's validation messages are Python's str() of pydantic error dicts, so
// reproducing them byte for byte needs Python's repr of strings, ints and
// floats. These helpers implement exactly the subset those messages use.

// pyStrRepr returns Python's repr(s): single quotes unless s contains a single
// quote and no double quote, escapes for backslash, the quote, \t \n \r and
// every non-printable code point.
func pyStrRepr(s string) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(quote)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			// Python strings cannot hold undecoded bytes; JSON decoding has
			// already replaced them, so this only guards direct callers.
			b.WriteString(`\ufffd`)
			i++
			continue
		}
		i += size
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(quote):
			b.WriteByte('\\')
			b.WriteByte(quote)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

// pyFloatStr returns Python's str(f) (the shortest round-tripping digits,
// positional notation for exponents in [-4, 16), scientific otherwise).
func pyFloatStr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	sci := strconv.FormatFloat(f, 'e', -1, 64) // e.g. "-1.25e+03"
	mant, expStr, _ := strings.Cut(sci, "e")
	exp, _ := strconv.Atoi(expStr)
	sign := ""
	if strings.HasPrefix(mant, "-") {
		sign, mant = "-", mant[1:]
	}
	digits := strings.Replace(mant, ".", "", 1)
	if exp < -4 || exp >= 16 {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		esign := "+"
		if exp < 0 {
			esign, exp = "-", -exp
		}
		return fmt.Sprintf("%s%se%s%02d", sign, m, esign, exp)
	}
	point := exp + 1 // digits before the decimal point
	switch {
	case point <= 0:
		return sign + "0." + strings.Repeat("0", -point) + digits
	case point >= len(digits):
		return sign + digits + strings.Repeat("0", point-len(digits)) + ".0"
	default:
		return sign + digits[:point] + "." + digits[point:]
	}
}

// pyNumberStr returns Python's str() of the value json.loads makes of a JSON
// number literal: an int (arbitrary precision) without '.', 'e' or 'E',
// otherwise a float.
func pyNumberStr(lit string) string {
	if !strings.ContainsAny(lit, ".eE") {
		n, ok := new(big.Int).SetString(lit, 10)
		if ok {
			return n.String()
		}
		return lit
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !math.IsInf(f, 0) {
		return lit
	}
	return pyFloatStr(f)
}

// Limits vLLM's validation handler puts on each reported error.
const (
	maxErrorInputChars = 200
	maxErrorChars      = 1000
	maxReportedErrors  = 10
)

// summarizeInput is vLLM's _summarize_error_input applied to the JSON value
// raw (nil meaning Python None): strings are cut at 200 characters,
// containers are described by their size, scalars become their str().
func summarizeInput(raw json.RawMessage) string {
	v := strings.TrimSpace(string(raw))
	if v == "" || v == "null" {
		return "None"
	}
	switch v[0] {
	case '"':
		var s string
		if err := json.Unmarshal([]byte(v), &s); err != nil {
			return v
		}
		return truncateChars(s, maxErrorInputChars, "...[truncated]")
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal([]byte(v), &items); err != nil {
			return "<list>"
		}
		return fmt.Sprintf("<list of %d items>", len(items))
	case '{':
		var members map[string]json.RawMessage
		if err := json.Unmarshal([]byte(v), &members); err != nil {
			return "<dict>"
		}
		return fmt.Sprintf("<dict of %d items>", len(members))
	case 't':
		return "True"
	case 'f':
		return "False"
	default:
		return truncateChars(pyNumberStr(v), maxErrorInputChars, "...[truncated]")
	}
}

// truncateChars cuts s to max code points (Python's len) and appends suffix
// when it had to cut.
func truncateChars(s string, max int, suffix string) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max {
			return s[:i] + suffix
		}
		n++
	}
	return s
}
