package parsers

import (
	"strings"
	"testing"
)

// Checked against Python 3.11: int(value) refuses over 4300 digits (the
// sign and underscores are not digits); float(value) has no limit and
// rounds correctly however long the literal.
func TestCoerceNumbersAtLength(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		ok             bool
		coerce         func(string) (string, bool)
	}{
		{"int 4300", strings.Repeat("9", 4300), strings.Repeat("9", 4300), true, coerceInt},
		{"int -4300", "-" + strings.Repeat("9", 4300), "-" + strings.Repeat("9", 4300), true, coerceInt},
		{"int 4301", strings.Repeat("9", 4301), "", false, coerceInt},
		{"int -4301", "-" + strings.Repeat("9", 4301), "", false, coerceInt},
		{"int underscores", strings.Repeat("1_", 2200) + "1", strings.Repeat("1", 2201), true, coerceInt},
		{"float long exponent", strings.Repeat("3", 200000) + "e-200000", "0.3333333333333333", true, coerceNumber},
		{"float long fraction", "0." + strings.Repeat("5", 200000), "0.5555555555555556", true, coerceNumber},
		{"float overflow", "1e" + strings.Repeat("9", 1000), "", false, coerceNumber},
	} {
		got, ok := tc.coerce(tc.in)
		if ok != tc.ok || got != tc.want {
			t.Errorf("%s: got %.30q, %v; want %.30q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
