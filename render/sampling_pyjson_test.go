package render

import "testing"

// Expected values are python3's json.dumps(s, ensure_ascii=…).
func TestJSONString(t *testing.T) {
	tests := []struct {
		in    string
		ascii bool
		want  string
	}{
		{"a\"b\\c\n\r\t\b\f\x01\x1f", false, `"a\"b\\c\n\r\t\b\f\u0001\u001f"`},
		{"a\"b\\c\n\r\t\b\f\x01\x1f", true, `"a\"b\\c\n\r\t\b\f\u0001\u001f"`},
		{"é€😀\u2028\x7f", false, "\"é€😀\u2028\x7f\""},
		{"é€😀\u2028\x7f", true, `"\u00e9\u20ac\ud83d\ude00\u2028\u007f"`},
		{"", true, `""`},
		{"\U0010FFFF plain", true, `"\udbff\udfff plain"`},
	}
	for _, tt := range tests {
		got := pyJSONString(tt.in)
		if tt.ascii {
			got = asciiJSONString(tt.in)
		}
		if got != tt.want {
			t.Errorf("json string of %q (ascii %v) = %s, want %s", tt.in, tt.ascii, got, tt.want)
		}
	}
}
