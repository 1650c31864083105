package pyfmt

import (
	"math"
	"testing"
)

// Expected values are python3's repr() of the same float.
func TestAppendFloatRepr(t *testing.T) {
	tests := []struct {
		name string
		in   float64
		want string
	}{
		{"zero", 0, "0.0"},
		{"negative zero", math.Copysign(0, -1), "-0.0"},
		{"one", 1, "1.0"},
		{"negative fraction", -1.5, "-1.5"},
		{"tenth", 0.1, "0.1"},
		{"rounding noise", 0.30000000000000004, "0.30000000000000004"},
		{"fixed", 123.456, "123.456"},
		{"smallest positional", 0.0001, "0.0001"},
		{"positional digits", 0.00012345, "0.00012345"},
		{"first exponent below", 1e-5, "1e-05"},
		{"negative small", -2.5e-7, "-2.5e-07"},
		{"largest positional power", 1e15, "1000000000000000.0"},
		{"largest positional", 9999999999999998.0, "9999999999999998.0"},
		{"first exponent above", 1e16, "1e+16"},
		{"exponent with fraction", 1.5e16, "1.5e+16"},
		{"long int-valued", 123456789012345678.0, "1.2345678901234568e+17"},
		{"2^64ish", 12345678901234567890.0, "1.2345678901234567e+19"},
		{"1e21", 1e21, "1e+21"},
		{"1e22", 1e22, "1e+22"},
		{"three-digit exponent", 1e100, "1e+100"},
		{"max", math.MaxFloat64, "1.7976931348623157e+308"},
		{"smallest normal", 2.2250738585072014e-308, "2.2250738585072014e-308"},
		{"subnormal", 1e-310, "1e-310"},
		{"smallest subnormal", 5e-324, "5e-324"},
		{"inf", math.Inf(1), "inf"},
		{"negative inf", math.Inf(-1), "-inf"},
		{"nan", math.NaN(), "nan"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(AppendFloatRepr(nil, tt.in)); got != tt.want {
				t.Errorf("AppendFloatRepr(%v) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestAppendFloatReprAppends(t *testing.T) {
	if got := string(AppendFloatRepr([]byte("x="), 2.5)); got != "x=2.5" {
		t.Errorf("got %q, want %q", got, "x=2.5")
	}
}
