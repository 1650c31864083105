package jinja

import (
	"strconv"
	"strings"
	"testing"
)

// Integer literals past CPython's 4,300-digit limit: Jinja2 3.1.6 on
// Python 3.11 (this machine's reference) raises ValueError while lexing
// a decimal literal of more digits, leading zeros included, and not for
// other bases or floats. The expected messages are what it printed.
func TestIntLiteralDigitLimit(t *testing.T) {
	const limitMsg = "ValueError: Exceeds the limit (4300 digits) for integer string conversion: value has %d digits; use sys.set_int_max_str_digits() to increase the limit"
	for _, tc := range []struct {
		lit  string
		want string // rendered output, or the error with %d for the digits
		n    int
	}{
		{lit: strings.Repeat("1", 4300), want: strings.Repeat("1", 4300)},
		{lit: strings.Repeat("1", 4301), want: limitMsg, n: 4301},
		{lit: strings.Repeat("0", 4301), want: limitMsg, n: 4301},
		{lit: strings.Repeat("9", 100000), want: limitMsg, n: 100000},
		{lit: strings.Repeat("1_", 2200) + "1", want: strings.Repeat("1", 2201)},
		{lit: strings.Repeat("1_", 4300) + "1", want: limitMsg, n: 4301},
		{lit: strings.Repeat("1", 5000) + ".5", want: "inf"},
		{lit: "0x" + strings.Repeat("1", 1000), want: "{big}"},
	} {
		out, err := renderString(t, "{{ "+tc.lit+" }}", nil)
		switch {
		case strings.HasPrefix(tc.want, "ValueError"):
			want := strings.Replace(tc.want, "%d", strconv.Itoa(tc.n), 1)
			if err == nil || err.Error() != want {
				t.Errorf("%.12s... (%d bytes): %v, want %s", tc.lit, len(tc.lit), err, want)
			}
		case err != nil:
			t.Errorf("%.12s... (%d bytes): %v", tc.lit, len(tc.lit), err)
		case tc.want == "{big}":
			if len(out) < 1000 {
				t.Errorf("hex literal rendered as %.40q", out)
			}
		case out != tc.want:
			t.Errorf("%.12s... (%d bytes) = %.40q, want %.40q", tc.lit, len(tc.lit), out, tc.want)
		}
	}
}
