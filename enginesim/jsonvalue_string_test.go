package enginesim

import (
	"strings"
	"testing"
)

// TestWriteJSONStringIsPythonDumps pins the engine's JSON strings to
// json.dumps(s, ensure_ascii=False) (outputs taken from python3): no HTML
// escaping, U+2028/U+2029 and DEL raw, controls by name or \u00XX.
func TestWriteJSONStringIsPythonDumps(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain", `"plain"`},
		{"<a>&\"\\", `"<a>&\"\\"`},
		{"a\u2028b\u2029c\x7f", "\"a\u2028b\u2029c\x7f\""},
		{"\x00\x1f\b\f\n\r\t", `"\u0000\u001f\b\f\n\r\t"`},
		{"天气 😀", `"天气 😀"`},
	} {
		var b strings.Builder
		writeJSONString(&b, c.in)
		if b.String() != c.want {
			t.Errorf("writeJSONString(%q) = %s, want %s", c.in, b.String(), c.want)
		}
	}
}
