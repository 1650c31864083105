package pylax

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// Expected values are what CPython 3 prints for repr()/str() of the same value.

func TestPyStrRepr(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `''`},
		{"plain", `'plain'`},
		{"it's", `"it's"`},
		{`it's "q"`, `'it\'s "q"'`},
		{`say "hi"`, `'say "hi"'`},
		{`back\slash`, `'back\\slash'`},
		{"tab\tnl\ncr\r", `'tab\tnl\ncr\r'`},
		{"bell\a del\x7f", `'bell\x07 del\x7f'`},
		{"nbsp\u00a0c1\u0085", `'nbsp\xa0c1\x85'`},
		{"line\u2028sep", `'line\u2028sep'`},
		{"zwj\u200d", `'zwj\u200d'`},
		{"héllo 你好 😀", `'héllo 你好 😀'`},
		{"private\U000F0000", `'private\U000f0000'`},
	}
	for _, tt := range tests {
		if got := StrRepr(tt.in); got != tt.want {
			t.Errorf("pyStrRepr(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestPyFloatStr(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0.0"},
		{1, "1.0"},
		{-1.5, "-1.5"},
		{123.456, "123.456"},
		{0.0001, "0.0001"},
		{0.00001, "1e-05"},
		{1.5e-7, "1.5e-07"},
		{1e15, "1000000000000000.0"},
		{1e16, "1e+16"},
		{1.5e16, "1.5e+16"},
		{9.223372036854776e18, "9.223372036854776e+18"},
		{1e300, "1e+300"},
		{0.30000000000000004, "0.30000000000000004"},
	}
	for _, tt := range tests {
		if got := FloatStr(tt.in); got != tt.want {
			t.Errorf("pyFloatStr(%v) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestSummarizeInput(t *testing.T) {
	long := strings.Repeat("é", 250)
	tests := []struct{ raw, want string }{
		{"", "None"},
		{"null", "None"},
		{"true", "True"},
		{"false", "False"},
		{"-0", "0"},
		{"007", "7"},
		{"1.50", "1.5"},
		{"1E400", "inf"},
		{"123456789012345678901234567890", "123456789012345678901234567890"},
		{`"x"`, "x"},
		{`[1,[2,3]]`, "<list of 2 items>"},
		{`{"a":1,"a":2,"b":3}`, "<dict of 2 items>"},
		{testenv.MustJSON(t, long), strings.Repeat("é", 200) + "...[truncated]"},
	}
	for _, tt := range tests {
		var raw json.RawMessage
		if tt.raw != "" {
			raw = json.RawMessage(tt.raw)
		}
		if got := summarizeInput(raw); got != tt.want {
			t.Errorf("summarizeInput(%s) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}

func TestSanitizeMessage(t *testing.T) {
	tests := []struct{ in, want string }{
		{"The model `Qwen/Qwen3-8B` does not exist.", "The model `Qwen/Qwen3-8B` does not exist."},
		{"The model `/home/me/models/qwen3` does not exist.", "The model `<path>` does not exist."},
		{"cannot open /srv/x/y.json now", "cannot open <path> now"},
		{"read models/qwen/tokenizer.json failed", "read models<path> failed"},
		{"<object at 0xdeadbeef>", "<object>"},
		{"  padded  \n", "padded"},
	}
	for _, tt := range tests {
		if got := SanitizeMessage(tt.in); got != tt.want {
			t.Errorf("SanitizeMessage(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
