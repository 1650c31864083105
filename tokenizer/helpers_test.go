package tokenizer

import (
	"encoding/json"
	"strings"
	"testing"
)

// The expected values of the table-driven tests in this package come from
// the reference, HF tokenizers 0.23.2 (Node binding), run on the same
// tokenizer.json snippets.

// testBPE returns a BPE model object with the given vocabulary (ids in
// order) and merges, plus any extra fields.
func testBPE(vocab []string, merges any, extra map[string]any) map[string]any {
	v := make(map[string]int, len(vocab))
	for i, t := range vocab {
		v[t] = i
	}
	m := map[string]any{
		"type": "BPE", "dropout": nil, "unk_token": nil, "continuing_subword_prefix": nil,
		"end_of_word_suffix": nil, "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
		"vocab": v, "merges": merges,
	}
	for k, x := range extra {
		m[k] = x
	}
	return m
}

// tinyModel is the model of the component tests, which never reach it.
var tinyModel = testBPE([]string{"a", "b", "ab"}, []string{"a b"}, nil)

// testTokenizerJSON assembles a tokenizer.json; nil sections are null.
type testTokenizerJSON struct {
	normalizer, preTokenizer, postProcessor, decoder any
	model                                            map[string]any
	added                                            []AddedToken
}

func (c testTokenizerJSON) build(t *testing.T) *Tokenizer {
	t.Helper()
	model := c.model
	if model == nil {
		model = tinyModel
	}
	added := c.added
	if added == nil {
		added = []AddedToken{}
	}
	doc := map[string]any{
		"version": "1.0", "truncation": nil, "padding": nil, "added_tokens": added,
		"normalizer": rawOrNil(c.normalizer), "pre_tokenizer": rawOrNil(c.preTokenizer),
		"post_processor": rawOrNil(c.postProcessor), "decoder": rawOrNil(c.decoder), "model": model,
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return tok
}

// rawOrNil turns a JSON string into raw JSON, keeping other values.
func rawOrNil(v any) any {
	if s, ok := v.(string); ok {
		if s == "" {
			return nil
		}
		return json.RawMessage(s)
	}
	return v
}

// asciiVocab is every printable ASCII character, ' ' being id 0.
func asciiVocab() []string {
	var v []string
	for c := 32; c < 127; c++ {
		v = append(v, string(rune(c)))
	}
	return v
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
