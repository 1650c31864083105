package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/vrender/vrender/internal/pylax"
)

// ParseJSONBody must accept exactly what a JSON parser accepts (our one
// documented difference aside: Python's NaN/Infinity, which Go rejects
// too), and never panic.
func FuzzParseJSONBody(f *testing.F) {
	for _, tc := range longIntBodies {
		f.Add([]byte(tc.body))
	}
	for _, s := range []string{`{}`, `{"prompt":"hi"}`, `[1,2.5e3,-0,"\u00e9"]`, `{"a":`, `"\ud800"`, `01`, `[1,]`, "\ufeff{}", `{"a" "b"}`, `tru`, ` `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseJSONBody(data)
		trimmed := bytes.TrimPrefix(data, utf8BOM)
		if !utf8.Valid(trimmed) {
			if !errors.Is(err, ErrBodyNotParsable) {
				t.Fatalf("invalid UTF-8 %q: err = %v", data, err)
			}
			return
		}
		if json.Valid(trimmed) && hasLongInt(trimmed) != refLongInt(trimmed) {
			t.Fatalf("%.40q: hasLongInt = %v, disagrees with decoding", data, hasLongInt(trimmed))
		}
		if errors.Is(err, ErrBodyNotParsable) {
			return // nesting past the recursion limit, or an over-long integer
		}
		if valid := json.Valid(trimmed); valid != (err == nil) {
			t.Fatalf("%q: json.Valid = %v but ParseJSONBody err = %v", data, valid, err)
		}
		var syn *JSONSyntaxError
		if err != nil && (!errors.As(err, &syn) || syn.Pos < 0 || syn.Pos > utf8.RuneCount(trimmed)) {
			t.Fatalf("%q: bad error %#v", data, err)
		}
		if err == nil && !bytes.Equal(got, trimmed) {
			t.Fatalf("%q: returned %q", data, got)
		}
	})
}

// Decoding never panics, and an accepted request survives a round trip
// through its own JSON.
func FuzzDecodeTokenizeRequest(f *testing.F) {
	for _, s := range []string{`{"prompt":"hi"}`, `{"messages":[{"role":"user","content":"x"}],"tools":null}`,
		`{"prompt":"hi","messages":[],"add_generation_prompt":"no"}`, `{"prompt":5}`, `[]`, `null`, `{"return_token_strs":"yes","prompt":""}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		r, err := DecodeTokenizeRequest(data)
		if err != nil {
			var verr *pylax.ValidationError
			if !errors.As(err, &verr) || len(verr.Errors) == 0 || verr.Message() == "" || verr.Param() == nil {
				t.Fatalf("%s: bad error %#v", data, err)
			}
			return
		}
		b, err := tokenizeJSON(r)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeTokenizeRequest(b)
		if err != nil {
			t.Fatalf("%s re-encoded as %s fails: %v", data, b, err)
		}
		b2, _ := tokenizeJSON(again)
		if !bytes.Equal(b, b2) {
			t.Fatalf("round trip differs:\n%s\n%s", b, b2)
		}
	})
}

// The same for /detokenize bodies; the fast path for plain integer lists
// must agree with the general one.
func FuzzDecodeDetokenizeRequest(f *testing.F) {
	for _, s := range []string{`{"tokens":[1,2,3]}`, `{"tokens":[1.0,"2",true]}`, `{"tokens":[-1]}`, `{"tokens":[9223372036854775807]}`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		r, err := DecodeDetokenizeRequest(data)
		if err != nil {
			var verr *pylax.ValidationError
			if !errors.As(err, &verr) || len(verr.Errors) == 0 {
				t.Fatalf("%s: bad error %#v", data, err)
			}
			return
		}
		for _, id := range r.Tokens {
			if id < 0 {
				t.Fatalf("%s: accepted negative id %d", data, id)
			}
		}
		b, _ := MarshalJSON(r)
		again, err := DecodeDetokenizeRequest(b)
		if err != nil || len(again.Tokens) != len(r.Tokens) {
			t.Fatalf("%s re-encoded as %s: %v", data, b, err)
		}
	})
}

// BenchmarkParseJSONBody is Python's syntax check on a 1 MB prompt body.
func BenchmarkParseJSONBody(b *testing.B) {
	body, _ := json.Marshal(map[string]any{"prompt": string(bytes.Repeat([]byte("héllo \"wörld\"\n"), 70000)), "tokens": make([]int, 10000)})
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := ParseJSONBody(body); err != nil {
			b.Fatal(err)
		}
	}
}
