package harmony

import (
	"slices"
	"testing"

	"github.com/vrender/vrender/internal/testmodel"
)

// openai_harmony's formatting tokens in o200k_harmony (src/tiktoken_ext/
// public_encodings.rs): the rendered prompt must tokenize them atomically.
var harmonySpecial = map[string]int{
	"<|return|>": 200002, "<|constrain|>": 200003, "<|channel|>": 200005,
	"<|start|>": 200006, "<|end|>": 200007, "<|message|>": 200008, "<|call|>": 200012,
}

func TestPromptIDs(t *testing.T) {
	tok := testmodel.Tokenizer(t, "gptoss")
	for text, id := range harmonySpecial {
		if got, ok := tok.TokenToID(text); !ok || got != id {
			t.Errorf("%s: id %d (%v), want %d", text, got, ok, id)
		}
	}
	prompt := "<|start|>system<|message|>hi<|end|><|start|>assistant to=functions.f<|channel|>commentary <|constrain|>json<|message|>{}<|call|><|start|>assistant"
	ids := tok.Encode(prompt, false)
	var specials []int
	for _, id := range ids {
		if tok.IsSpecial(id) {
			specials = append(specials, id)
		}
	}
	want := []int{200006, 200008, 200007, 200006, 200005, 200003, 200008, 200012, 200006}
	if len(specials) != len(want) {
		t.Fatalf("special ids %v, want %v", specials, want)
	}
	for i := range want {
		if specials[i] != want[i] {
			t.Fatalf("special ids %v, want %v", specials, want)
		}
	}
	if got := tok.Decode(ids, false); got != prompt {
		t.Errorf("decode %q, want %q", got, prompt)
	}
}

// Token sequences tiktoken's o200k_harmony produced, from openai/harmony
// (ec7606d): src/tests.rs test_simple_tool_call, test-data/
// test_simple_reasoning_response.txt and test_simple_tool_call.txt. Every run
// of ordinary ids between special ones must be what EncodeOrdinary gives
// for its decoded text: openai_harmony renders text with encode_ordinary,
// and so does vrender.
var tiktokenRuns = [][]int{
	{200005, 35644, 200008, 1844, 31064, 25, 392, 4827, 382, 290, 11122, 306, 40510, 16842,
		1416, 1309, 316, 1199, 37342, 170154, 4584, 13, 200007, 200006, 173781, 200005, 35644, 316,
		28, 29712, 170154, 3490, 200008, 10848, 7693, 1243, 392, 173844, 18583},
	{200005, 35644, 200008, 1844, 31064, 25, 392, 4827, 382, 220, 17, 659, 220, 17, 16842, 12295, 81645, 13,
		51441, 6052, 13, 200002, 200006, 173781, 200005, 17196, 200008, 17, 659, 220, 17, 314, 220, 19, 13},
	{200005, 35644, 200008, 1844, 31064, 25, 392, 4827, 382, 290, 11122, 306, 40510, 16842, 1416, 1309, 316,
		1199, 37342, 170154, 4584, 13, 200002, 200006, 173781, 316, 28, 29712, 170154, 200005, 35644, 3490,
		200008, 10848, 7693, 1243, 392, 173844, 18583},
}

func TestEncodeOrdinaryMatchesTiktoken(t *testing.T) {
	tok := testmodel.Tokenizer(t, "gptoss")
	for _, ids := range tiktokenRuns {
		var run []int
		flush := func() {
			if len(run) == 0 {
				return
			}
			text := tok.Decode(run, false)
			if got := tok.EncodeOrdinary(text); !slices.Equal(got, run) {
				t.Errorf("EncodeOrdinary(%q) = %v, tiktoken %v", text, got, run)
			}
			run = run[:0]
		}
		for _, id := range ids {
			if tok.IsSpecial(id) {
				flush()
				continue
			}
			run = append(run, id)
		}
		flush()
	}
	// Without added-token text it is Encode (no post-processor here).
	for _, text := range []string{"", "hello world", " to=functions.get_weather", "Ünïcode 中文 🙂\n\n  x", "commentary json"} {
		if got, want := tok.EncodeOrdinary(text), tok.Encode(text, false); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Errorf("EncodeOrdinary(%q) = %v, Encode %v", text, got, want)
		}
	}
	// Text spelling a special token is ordinary text, unlike Encode.
	if ids := tok.EncodeOrdinary("a<|end|>b"); slices.Contains(ids, 200007) {
		t.Errorf("EncodeOrdinary kept <|end|> special: %v", ids)
	}
	if ids := tok.Encode("a<|end|>b", false); !slices.Contains(ids, 200007) {
		t.Errorf("Encode did not find <|end|>: %v", ids)
	}
}
