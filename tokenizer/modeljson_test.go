package tokenizer

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/internal/wire"
)

func TestParseVocab(t *testing.T) {
	in := `{ "a": 0, "\u00e9\"\\": 1 ,"\ud83d\ude00": 2,
		"tab\t": 3, "": 4 }`
	arena, ends, ids, err := parseVocab([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var toks []string
	start := 0
	for _, e := range ends {
		toks = append(toks, string(arena[start:e]))
		start = e
	}
	if want := []string{"a", "é\"\\", "😀", "tab\t", ""}; !slices.Equal(toks, want) {
		t.Errorf("tokens %q, want %q", toks, want)
	}
	if want := []int32{0, 1, 2, 3, 4}; !slices.Equal(ids, want) {
		t.Errorf("ids %v, want %v", ids, want)
	}
}

func TestParseVocabErrors(t *testing.T) {
	for _, in := range []string{`{"a": -1}`, `{"a": 1.5}`, `{"a" 1}`, `{"a": 1`, `["a"]`, `{"a": 99999999999}`, `{"a\q": 1}`} {
		if _, _, _, err := parseVocab([]byte(in)); err == nil {
			t.Errorf("parseVocab(%s) succeeded", in)
		}
	}
}

func TestParseMerges(t *testing.T) {
	for _, in := range []string{`["a b", "ab c"]`, `[["a", "b"], ["ab", "c"]]`, ` [ [ "a" , "b" ] , "ab c" ] `} {
		var got []string
		err := parseMerges([]byte(in), func(rank int, a, b []byte) error {
			got = append(got, string(a)+"|"+string(b))
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if want := []string{"a|b", "ab|c"}; !slices.Equal(got, want) {
			t.Errorf("%s: merges %q, want %q", in, got, want)
		}
	}
	// A pair may contain spaces; the legacy form may not.
	var got []string
	parseMerges([]byte(`[["a b", "\"c"]]`), func(_ int, a, b []byte) error {
		got = append(got, string(a), string(b))
		return nil
	})
	if want := []string{"a b", `"c`}; !slices.Equal(got, want) {
		t.Errorf("pair with space: %q, want %q", got, want)
	}
	for _, in := range []string{`["a b c"]`, `["ab"]`, `[["a"]]`, `[1]`} {
		if err := parseMerges([]byte(in), func(int, []byte, []byte) error { return nil }); err == nil {
			t.Errorf("parseMerges(%s) succeeded", in)
		}
	}
}

func TestObjectFields(t *testing.T) {
	in := `{"a": {"x": [1, "}\"]", {"y": null}]}, "b": "s\\\"", "c": -1.5e3, "d": true}`
	f, err := objectFields([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": `{"x": [1, "}\"]", {"y": null}]}`, "b": `"s\\\""`, "c": "-1.5e3", "d": "true"}
	for k, v := range want {
		if string(f[k]) != v {
			t.Errorf("field %s = %s, want %s", k, f[k], v)
		}
	}
	for _, bad := range []string{`{"a": [1, 2}`, `{"a": "x}`, `{"a" 1}`, `[1]`} {
		if _, err := objectFields([]byte(bad)); err == nil {
			t.Errorf("objectFields(%s) succeeded", bad)
		}
	}
}

const (
	tinyModelJSON       = `"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]}`
	tinyModelJSONObject = `{` + tinyModelJSON
)

// TestParseKeyOrder: the model may come before the sections it depends on,
// and merges before the prefix they need.
func TestParseKeyOrder(t *testing.T) {
	doc := `{"model":{"merges":["u ##n"],"vocab":{"u":0,"##n":1,"un":2},"continuing_subword_prefix":"##","type":"BPE"},` +
		`"pre_tokenizer":{"type":"WhitespaceSplit"},"version":"1.0"}`
	tok, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if got := tok.Encode("un u", false); !slices.Equal(got, []int{2, 0}) {
		t.Errorf("Encode = %v, want [2 0]", got)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, json, wantErr string }{
		{"not JSON", `{"version": `, "parse tokenizer.json"},
		{"unknown version", `{"version":"2.0"}`, "unknown tokenizer.json version"},
		{"no model", `{"version":"1.0"}`, "missing model"},
		{"empty model", `{"version":"1.0","model":{}}`, "model: model without a type"},
		{"model without merges", `{"model":{"type":"BPE","vocab":{"a":0}}}`, "without vocab or merges"},
		{"unknown normalizer", `{"normalizer":{"type":"Foo"},` + tinyModelJSON + `}`, `normalizer: unknown normalizer type "Foo"`},
		{"unknown pre-tokenizer", `{"pre_tokenizer":{"type":"Foo"},` + tinyModelJSON + `}`, `pre_tokenizer: unknown pre-tokenizer type "Foo"`},
		{"unknown decoder", tinyModelJSONObject + `,"decoder":{"type":"Foo"}}`, `decoder: unknown decoder type "Foo"`},
		{"bad added tokens", `{"added_tokens":[{"id":"x"}],` + tinyModelJSON + `}`, "added_tokens"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.json))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

// The readers' entry points, as the tests drive them on their own.

// parseVocab reads {"token": id, ...} into one arena of concatenated
// token bytes; ends[i] is where token i ends in it.
func parseVocab(b []byte) (arena []byte, ends []int, ids []int32, err error) {
	r := wire.NewReader(b)
	if arena, ends, ids, err = readVocab(r); err == nil {
		err = r.End()
	}
	return arena, ends, ids, err
}

// parseMerges reads ["a b", ...] or [["a", "b"], ...], calling fn with each
// pair in rank order.
func parseMerges(b []byte, fn func(rank int, a, b []byte) error) error {
	r := wire.NewReader(b)
	err := readMerges(r, func(rank int, a, c string) error { return fn(rank, []byte(a), []byte(c)) })
	if err == nil {
		err = r.End()
	}
	return err
}

// objectFields returns the raw value of every member of a JSON object,
// leaving the values undecoded; later duplicates win.
func objectFields(b []byte) (map[string][]byte, error) {
	fields := map[string][]byte{}
	r := wire.NewReader(b)
	err := r.Object(func(key string) error {
		raw, err := r.Raw()
		if err != nil {
			return fmt.Errorf("%q: %w", key, err)
		}
		fields[key] = raw
		return nil
	})
	if err == nil {
		err = r.End()
	}
	return fields, err
}

// The readers against the scanner they replaced (jsonscan_ref_test.go):
// on valid UTF-8 they give its values, and reject only what it rejects or
// what is not JSON (it let some invalid JSON through: leading zeros,
// control characters in strings, garbage in skipped scalars, trailing
// text). Invalid UTF-8 becomes U+FFFD where the old scanner kept the
// bytes; only the absence of panics is checked there.

func refParseVocab(b []byte) ([]byte, []int, []int32, error) {
	s := &refJSONScanner{b: b}
	arena, ends, ids, err := s.vocab()
	if err == nil {
		err = refEnd(s)
	}
	return arena, ends, ids, err
}

func refParseMerges(b []byte) ([]string, error) {
	s := &refJSONScanner{b: b}
	var got []string
	err := s.merges(func(rank int, a, c []byte) error {
		got = append(got, fmt.Sprint(rank, string(a), "|", string(c)))
		return nil
	})
	if err == nil {
		err = refEnd(s)
	}
	return got, err
}

func refObjectFields(b []byte) (map[string][]byte, error) {
	fields := map[string][]byte{}
	s := &refJSONScanner{b: b}
	err := s.object(func(key string) error {
		raw, err := s.rawValue()
		fields[key] = raw
		return err
	})
	if err == nil {
		err = refEnd(s)
	}
	return fields, err
}

func refEnd(s *refJSONScanner) error {
	if s.peek() != 0 {
		return s.errorf("trailing data")
	}
	return nil
}

func checkReadersMatchRef(t *testing.T, b []byte) {
	t.Helper()
	check := func(what string, err, refErr error, same bool) {
		t.Helper()
		if !utf8.Valid(b) {
			return
		}
		switch {
		case err == nil && refErr != nil:
			t.Fatalf("%s(%q) accepted what the reference rejects: %v", what, b, refErr)
		case err != nil && refErr == nil && wire.Valid(b) == nil:
			t.Fatalf("%s(%q) rejected valid JSON the reference accepts: %v", what, b, err)
		case err == nil && !same:
			t.Fatalf("%s(%q) differs from the reference", what, b)
		}
	}
	arena, ends, ids, err := parseVocab(b)
	rArena, rEnds, rIDs, rErr := refParseVocab(b)
	check("vocab", err, rErr, string(arena) == string(rArena) && slices.Equal(ends, rEnds) && slices.Equal(ids, rIDs))

	var merges []string
	err = parseMerges(b, func(rank int, a, c []byte) error {
		merges = append(merges, fmt.Sprint(rank, string(a), "|", string(c)))
		return nil
	})
	rMerges, rErr := refParseMerges(b)
	check("merges", err, rErr, slices.Equal(merges, rMerges))

	fields, err := objectFields(b)
	rFields, rErr := refObjectFields(b)
	same := len(fields) == len(rFields)
	for k, v := range fields {
		same = same && string(rFields[k]) == string(v)
	}
	check("objectFields", err, rErr, same)
}

var modelJSONSeeds = []string{
	`{ "a": 0, "\u00e9\"\\": 1 ,"\ud83d\ude00": 2, "tab\t": 3, "": 4 }`,
	`{"a": -1}`, `{"a": 1.5}`, `{"a" 1}`, `{"a": 1`, `["a"]`, `{"a": 99999999999}`, `{"a\q": 1}`, `{"a": 01}`,
	`{"a": -0}`, `{"a": 2147483647, "b": 2147483648}`, `{"a":0,"a":1}`, "{\"\x01\": 1}", `{"\ud800\u0041": 1}`,
	`["a b", "ab c"]`, `[["a", "b"], ["ab", "c"]]`, ` [ [ "a" , "b" ] , "ab c" ] `, `[["a b", "\"c"]]`,
	`["a b c"]`, `["ab"]`, `[["a"]]`, `[["a","b","c"]]`, `[1]`, `[]`, `{}`, `[["a",1]]`,
	`{"a": {"x": [1, "}\"]", {"y": null}]}, "b": "s\\\"", "c": -1.5e3, "d": true}`,
	`{"a": [1, 2}`, `{"a": "x}`, `{"a": nul}`, `{"a": 1} x`,
}

func TestReadersMatchRef(t *testing.T) {
	for _, s := range modelJSONSeeds {
		checkReadersMatchRef(t, []byte(s))
	}
	_, _, _, err := parseVocab([]byte(`{"a": -0}`))
	if err == nil {
		t.Error(`vocab id -0 accepted`)
	}
}

func FuzzReadersMatchRef(f *testing.F) {
	for _, s := range modelJSONSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkReadersMatchRef)
}

// BenchmarkModelJSON compares, in one run, reading a tokenizer.json's
// vocabulary and merges with wire.Reader and with the scanner it
// replaced: the JSON part of Load, without building the tables.
func BenchmarkModelJSON(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(testenv.ModelDir(b, "qwen3"), "tokenizer.json"))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("wire", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			r := wire.NewReader(data)
			err := r.Object(func(key string) error {
				if key != "model" {
					_, err := r.Raw()
					return err
				}
				return r.Object(func(key string) error {
					switch key {
					case "vocab":
						_, ends, _, err := readVocab(r)
						n += len(ends)
						return err
					case "merges":
						return readMerges(r, func(int, string, string) error { n++; return nil })
					}
					_, err := r.Raw()
					return err
				})
			})
			if err != nil || n < 100000 {
				b.Fatal(err, n)
			}
		}
	})
	b.Run("ref-scanner", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			s := &refJSONScanner{b: data}
			err := s.object(func(key string) error {
				if key != "model" {
					_, err := s.rawValue()
					return err
				}
				return s.object(func(key string) error {
					switch key {
					case "vocab":
						_, ends, _, err := s.vocab()
						n += len(ends)
						return err
					case "merges":
						return s.merges(func(int, []byte, []byte) error { n++; return nil })
					}
					_, err := s.rawValue()
					return err
				})
			})
			if err != nil || n < 100000 {
				b.Fatal(err, n)
			}
		}
	})
}
