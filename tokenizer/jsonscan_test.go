package tokenizer

import (
	"fmt"
	"slices"
	"strings"
	"testing"
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

// The scanner's entry points, as the tests drive them on their own.

// parseVocab reads {"token": id, ...} into one arena of concatenated
// token bytes; ends[i] is where token i ends in it.
func parseVocab(b []byte) (arena []byte, ends []int, ids []int32, err error) {
	return (&jsonScanner{b: b}).vocab()
}

// parseMerges reads ["a b", ...] or [["a", "b"], ...], calling fn with each
// pair in rank order. The slices are only valid during the call.
func parseMerges(b []byte, fn func(rank int, a, b []byte) error) error {
	return (&jsonScanner{b: b}).merges(fn)
}

// objectFields returns the raw value of every member of a JSON object,
// leaving the values undecoded; later duplicates win.
func objectFields(b []byte) (map[string][]byte, error) {
	fields := map[string][]byte{}
	s := &jsonScanner{b: b}
	err := s.object(func(key string) error {
		raw, err := s.rawValue()
		if err != nil {
			return fmt.Errorf("%q: %w", key, err)
		}
		fields[key] = raw
		return nil
	})
	return fields, err
}
