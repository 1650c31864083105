package bench

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testmodel"
)

func TestRandomDataset(t *testing.T) {
	tok := testmodel.Tokenizer(t, "qwen3")
	o := RandomDatasetOptions{NumPrompts: 20, InputLen: 64, OutputLen: 32, RangeRatio: 0.25, Seed: 3, RequestIDPrefix: "p-"}
	a, err := RandomDataset(tok, o)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := RandomDataset(tok, o)
	if !slices.Equal(a, b) {
		t.Error("same seed, different prompts")
	}
	o.Seed = 4
	if c, _ := RandomDataset(tok, o); slices.Equal(a, c) {
		t.Error("different seeds, same prompts")
	}
	for i, s := range a {
		if s.RequestID != "p-"+strconv.Itoa(i) {
			t.Errorf("request %d has id %q", i, s.RequestID)
		}
		if n := len(tok.Encode(s.Prompt, false)); n != s.PromptLen {
			t.Errorf("prompt %d encodes to %d tokens, PromptLen says %d", i, n, s.PromptLen)
		}
		// Lengths are uniform in [floor(64*0.75), ceil(64*1.25)]; the decode/encode
		// round trip can miss by a token or two after its ten tries.
		if s.PromptLen < 46 || s.PromptLen > 82 {
			t.Errorf("prompt %d has %d tokens, want about [48, 80]", i, s.PromptLen)
		}
		if s.ExpectedOutputLen < 24 || s.ExpectedOutputLen > 40 {
			t.Errorf("output len %d outside [24, 40]", s.ExpectedOutputLen)
		}
		for _, id := range tok.Encode(s.Prompt, false) {
			if tok.IsSpecial(id) {
				t.Errorf("prompt %d holds special token %d", i, id)
			}
		}
	}

	exact, err := RandomDataset(tok, RandomDatasetOptions{NumPrompts: 5, InputLen: 100, OutputLen: 256, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range exact {
		if s.ExpectedOutputLen != 256 || s.PromptLen != 100 {
			t.Errorf("range ratio 0: %d in / %d out, want 100 / 256", s.PromptLen, s.ExpectedOutputLen)
		}
	}
	for _, bad := range []RandomDatasetOptions{{NumPrompts: 1, InputLen: 10, RangeRatio: 1}, {NumPrompts: 0, InputLen: 10}, {NumPrompts: 1, InputLen: 0}} {
		if _, err := RandomDataset(tok, bad); err == nil {
			t.Errorf("RandomDataset(%+v) succeeded", bad)
		}
	}
	if _, err := RandomDataset(nil, o); err == nil {
		t.Error("RandomDataset without a tokenizer succeeded")
	}
}

func TestCustomDataset(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "prompts.jsonl")
	lines := `{"prompt": "What is the capital of India?", "output_tokens": 10}
{"prompt": "What is the capital of Iran?", "output_tokens": 20}

{"prompt": "What is the capital of China?", "output_tokens": 30}
`
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	o := CustomDatasetOptions{Path: path, NumPrompts: 7, OutputLen: 128, Seed: 5, RequestIDPrefix: "c-"}
	a, err := CustomDataset(nil, o)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := CustomDataset(nil, o)
	if len(a) != 7 || !slices.Equal(a, b) {
		t.Fatalf("oversampled dataset: %d requests, deterministic %v", len(a), slices.Equal(a, b))
	}
	seen := map[string]bool{}
	for i, s := range a[:3] {
		seen[s.Prompt] = true
		if s.ExpectedOutputLen != 128 || s.RequestID != "c-"+strconv.Itoa(i) {
			t.Errorf("request %d = %+v", i, s)
		}
	}
	if len(seen) != 3 {
		t.Errorf("the first three requests are not the three lines: %v", seen)
	}
	ordered, err := CustomDataset(nil, CustomDatasetOptions{Path: path, OutputLen: -1, NoShuffle: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(ordered) != 3 || ordered[0].ExpectedOutputLen != 10 || ordered[2].Prompt != "What is the capital of China?" {
		t.Errorf("unshuffled, per-line output lengths: %+v", ordered)
	}

	bad := filepath.Join(dir, "bad.jsonl")
	for content, want := range map[string]string{
		`{"text": "x"}`:                    `no "prompt"`,
		`{"prompt": "x"`:                   "line 1",
		"":                                 "no prompts",
		`{"prompt": "x"}` + "\n" + `[1,2]`: "line 2",
	} {
		if err := os.WriteFile(bad, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := CustomDataset(nil, CustomDatasetOptions{Path: bad, OutputLen: 1}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("content %q: err = %v, want %q", content, err, want)
		}
	}
	if err := os.WriteFile(bad, []byte(`{"prompt": "x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := CustomDataset(nil, CustomDatasetOptions{Path: bad, OutputLen: -1}); err == nil {
		t.Error("OutputLen -1 without output_tokens succeeded")
	}
}

func TestCustomDatasetCountsPromptTokens(t *testing.T) {
	tok := testmodel.Tokenizer(t, "qwen3")
	path := filepath.Join(t.TempDir(), "p.jsonl")
	if err := os.WriteFile(path, []byte(`{"prompt": "Hello, world!"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := CustomDataset(tok, CustomDatasetOptions{Path: path, OutputLen: 8})
	if err != nil {
		t.Fatal(err)
	}
	if want := len(tok.Encode("Hello, world!", true)); got[0].PromptLen != want || want == 0 {
		t.Errorf("PromptLen = %d, want %d", got[0].PromptLen, want)
	}
}
