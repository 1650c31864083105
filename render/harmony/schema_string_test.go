package harmony

import (
	"strings"
	"testing"
)

// TestWriteJSONStringIsSerde pins schema strings (enum values, defaults)
// to serde_json's escaping: <, >, &, DEL and U+2028/U+2029 raw, controls by
// name or \u00xx, and a literal backslash-u text left as text (the
// json.Marshal+Replacer this replaced turned `\u003c` into `\<`).
func TestWriteJSONStringIsSerde(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"<a>&b", `"<a>&b"`},
		{"x\u2028y\u2029z\x7f", "\"x\u2028y\u2029z\x7f\""},
		{"\x00\x1f\b\f\n\r\t\"\\", `"\u0000\u001f\b\f\n\r\t\"\\"`},
		{`\u003c`, `"\\u003c"`},
	} {
		var b strings.Builder
		writeJSONString(&b, c.in)
		if b.String() != c.want {
			t.Errorf("writeJSONString(%q) = %s, want %s", c.in, b.String(), c.want)
		}
	}
}
