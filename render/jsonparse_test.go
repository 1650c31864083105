package render

import (
	"encoding/json"
	"testing"
)

// TestParseJSONAgainstEncodingJSON checks the hand-written decoder accepts
// and rejects what encoding/json does and decodes strings the same way.
func TestParseJSONAgainstEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{"a":1,"b":[true,false,null],"c":{"d":"e"}}`, `[]`, `{}`, ` "x" `, `-0.5e+10`, `0`,
		`"\u00e9\ud83d\ude00\n\t\"\\\/"`, `"\ud800"`, `"\ud800\u0041"`, "\"\xff\"",
		`{"a":1,}`, `[1,]`, `01`, `1.`, `.5`, `"\x"`, `{"a" 1}`, `[1 2]`, `tru`, `"a`, `{"a":1}x`, "\"\t\"", ``,
	} {
		var want any
		wantErr := json.Unmarshal([]byte(in), &want) != nil
		n, err := parseJSON([]byte(in))
		if (err != nil) != wantErr {
			t.Errorf("parseJSON(%q) error = %v, encoding/json error = %v", in, err, wantErr)
			continue
		}
		if err != nil {
			continue
		}
		if s, ok := want.(string); ok && n.s != s {
			t.Errorf("parseJSON(%q) = %q, want %q", in, n.s, s)
		}
	}
	n, err := parseJSON([]byte(`{"b":1,"a":2,"b":3}`))
	if err != nil || nodeJSON(n) != `{"b":3,"a":2}` {
		t.Errorf("duplicate keys: %s, %v", nodeJSON(n), err)
	}
}
