package pyfmt

import "testing"

// Expected values are python3's str(json.loads(lit)).
func TestAppendNumberLiteral(t *testing.T) {
	tests := []struct {
		name, lit, want string
		ok              bool
	}{
		{"zero", "0", "0", true},
		{"negative zero int", "-0", "0", true},
		{"int", "42", "42", true},
		{"negative int", "-17", "-17", true},
		{"big int", "123456789012345678901234567890", "123456789012345678901234567890", true},
		{"trailing zero", "1.50", "1.5", true},
		{"exponent makes float", "1e2", "100.0", true},
		{"fraction with exponent", "0.1e1", "1.0", true},
		{"negative zero float", "-0.0", "-0.0", true},
		{"overflow", "1E400", "inf", true},
		{"negative overflow", "-1e400", "-inf", true},
		{"underflow", "1e-400", "0.0", true},
		{"rounds to subnormal", "2.5e-324", "5e-324", true},
		{"not a number", "abc", "", false},
		{"bad float", "1.2.3", "", false},
		{"empty", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := AppendNumberLiteral(nil, tt.lit)
			if string(got) != tt.want || ok != tt.ok {
				t.Errorf("AppendNumberLiteral(%q) = %q, %v; want %q, %v", tt.lit, got, ok, tt.want, tt.ok)
			}
		})
	}
}
