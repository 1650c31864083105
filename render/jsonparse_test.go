package render

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
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
		if s, ok := want.(string); ok && n.S != s {
			t.Errorf("parseJSON(%q) = %q, want %q", in, n.S, s)
		}
	}
	n, err := parseJSON([]byte(`{"b":1,"a":2,"b":3}`))
	if err != nil || nodeJSON(n) != `{"b":3,"a":2}` {
		t.Errorf("duplicate keys: %s, %v", nodeJSON(n), err)
	}
}

// FuzzParseJSONMatchesReference: parseJSON (internal/wire) decodes what
// render's own decoder before it (refParseJSON) decoded to the same tree,
// and rejects what it rejected. Error texts differ on purpose: parseJSON's
// are Python's JSONDecodeError, as vLLM's json.loads raises them; and
// invalid UTF-8 in a string now becomes one U+FFFD per byte, as
// encoding/json makes it (the old decoder made one per run). No body the
// server accepts holds invalid UTF-8: Python cannot decode it.
func FuzzParseJSONMatchesReference(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[true,false,null],"c":{"d":"e"}}`, `[]`, `{}`, ` "x" `, `-0.5e+10`,
		`"\u00e9\ud83d\ude00\n\t\"\\\/"`, `"\ud800"`, `"\ud800\u0041"`, "\"\xff\"", `{"a":1,}`, `01`, `1.`, `1e`,
		`{"b":1,"a":2,"b":3}`, `"\udc00\ud800\udc00"`, `[1E+2,-0,0.0]`, strings.Repeat("[", 513) + strings.Repeat("]", 513),
		strings.Repeat("[", 512) + strings.Repeat("]", 512)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !utf8.Valid(data) {
			return
		}
		want, wantErr := refParseJSON(data)
		got, err := parseJSON(data)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%q: parseJSON err = %v, reference err = %v", data, err, wantErr)
		}
		if errors.Is(wantErr, errRefJSONTooDeep) != errors.Is(err, errJSONTooDeep) {
			t.Fatalf("%q: parseJSON err = %v, reference err = %v", data, err, wantErr)
		}
		if err == nil && nodeJSON(got) != nodeJSON(want) {
			t.Fatalf("%q: parseJSON %s, reference %s", data, nodeJSON(got), nodeJSON(want))
		}
	})
}
