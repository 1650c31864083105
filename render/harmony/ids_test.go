package harmony

import (
	"path/filepath"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/tokenizer"
)

// openai_harmony's formatting tokens in o200k_harmony (src/tiktoken_ext/
// public_encodings.rs): the rendered prompt must tokenize them atomically.
var harmonySpecial = map[string]int{
	"<|return|>": 200002, "<|constrain|>": 200003, "<|channel|>": 200005,
	"<|start|>": 200006, "<|end|>": 200007, "<|message|>": 200008, "<|call|>": 200012,
}

func TestPromptIDs(t *testing.T) {
	tok, err := tokenizer.Load(filepath.Join(testenv.ModelDir(t, "gptoss"), "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
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
