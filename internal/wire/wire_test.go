package wire

import "testing"

func TestAppendStringMatchesPython(t *testing.T) {
	// Expected values are Python's json.dumps(s, ensure_ascii=False) and
	// json.dumps(s) of the same str (invalid bytes: of the str a lossy
	// decode makes of them).
	tests := []struct{ in, want, ascii string }{
		{"", `""`, `""`},
		{"<|im_start|>a&b", `"<|im_start|>a&b"`, `"<|im_start|>a&b"`},
		{"a\u2028b\u2029c", "\"a\u2028b\u2029c\"", `"a\u2028b\u2029c"`},
		{`x\u2028`, `"x\\u2028"`, `"x\\u2028"`},
		{"\b\f\x01\n\r\t\"\\\x1f", `"\b\f\u0001\n\r\t\"\\\u001f"`, `"\b\f\u0001\n\r\t\"\\\u001f"`},
		{"\x7f", "\"\x7f\"", `"\u007f"`},
		{"café 😀", `"café 😀"`, `"caf\u00e9 \ud83d\ude00"`},
		{"a\xffb", "\"a\uFFFDb\"", `"a\ufffdb"`},
	}
	for _, tt := range tests {
		if got := string(AppendString([]byte("x"), tt.in)); got != "x"+tt.want {
			t.Errorf("AppendString(%q) = %s, want %s", tt.in, got, tt.want)
		}
		if got := string(AppendStringASCII(nil, tt.in)); got != tt.ascii {
			t.Errorf("AppendStringASCII(%q) = %s, want %s", tt.in, got, tt.ascii)
		}
	}
}

func TestAppendRaw(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "null"},
		{`{"a": [1, 2], "b" : "x y"}`, `{"a":[1,2],"b":"x y"}`},
		{`{"k": "\u2028 \\u2029 \u003c"}`, "{\"k\":\"\u2028 \\\\u2029 \\u003c\"}"},
	}
	for _, tt := range tests {
		got, err := AppendRaw([]byte("p"), []byte(tt.in))
		if err != nil || string(got) != "p"+tt.want {
			t.Errorf("AppendRaw(%s) = %s, %v, want p%s", tt.in, got, err, tt.want)
		}
	}
	if _, err := AppendRaw(nil, []byte(`{"a":`)); err == nil {
		t.Error("AppendRaw accepted invalid JSON")
	}
}

func TestAppendInts(t *testing.T) {
	if got := string(AppendInts(nil, []int{0, -1, 151643})); got != "[0,-1,151643]" {
		t.Errorf("AppendInts = %s", got)
	}
	if got := string(AppendInts(nil, nil)); got != "[]" {
		t.Errorf("AppendInts(nil) = %s", got)
	}
}
