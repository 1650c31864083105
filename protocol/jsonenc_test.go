package protocol

import "testing"

func TestMarshalJSONMatchesPython(t *testing.T) {
	// Expected values are Python's json.dumps(x, ensure_ascii=False, separators=(",", ":")).
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"html kept", "<|im_start|>a&b", `"<|im_start|>a&b"`},
		{"line separators raw", "a\u2028b\u2029c", "\"a\u2028b\u2029c\""},
		{"escaped backslash before u2028 text", `x\u2028`, `"x\\u2028"`},
		{"control escapes", "\b\f\x01\n", `"\b\f\u0001\n"`},
		{"nested", map[string]any{"k": []string{"\u2028"}}, "{\"k\":[\"\u2028\"]}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MarshalJSON(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("MarshalJSON(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}
