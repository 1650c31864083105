package preflight

import (
	"encoding/json"
	"testing"
)

// TestQuoteJSONRoundTrips checks that the strings preflight splices into
// request bodies come back unchanged through a JSON decoder.
func TestQuoteJSONRoundTrips(t *testing.T) {
	for _, s := range []string{"", "m", "<|im_start|>a&b", "q\"\\\n\t\x00\x7f", "a\u2028b 天气 😀"} {
		q := quoteJSON(s)
		var back string
		if err := json.Unmarshal([]byte(q), &back); err != nil || back != s {
			t.Errorf("quoteJSON(%q) = %s: decodes to %q, %v", s, q, back, err)
		}
	}
}
