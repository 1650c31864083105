package bench

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStandardInputs(t *testing.T) {
	cases := []struct {
		name        string
		gen         func() string
		minBytes    int
		maxBytes    int
		mustContain []string
	}{
		{"chat prompt", ChatPrompt, ChatPromptBytes, ChatPromptBytes + 8<<10,
			[]string{"<|im_start|>system\n", "<tools>", "<tool_call>\n{", "<tool_response>", "<think>", "```go", "的", "Система", "<|im_start|>assistant\n"}},
		{"mixed text", func() string { return MixedText(MixedTextBytes) }, MixedTextBytes, MixedTextBytes,
			[]string{"```rust", "| ", "Order #", "النظام", "🎉", "\r\n", "{\""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.gen()
			if len(s) < tc.minBytes || len(s) > tc.maxBytes {
				t.Errorf("%d bytes, want %d..%d", len(s), tc.minBytes, tc.maxBytes)
			}
			if !utf8.ValidString(s) {
				t.Error("not valid UTF-8")
			}
			if strings.ContainsRune(s, utf8.RuneError) {
				t.Error("contains U+FFFD: a generator cut a character")
			}
			for _, want := range tc.mustContain {
				if !strings.Contains(s, want) {
					t.Errorf("does not contain %q", want)
				}
			}
			if s != tc.gen() {
				t.Error("not deterministic")
			}
		})
	}
}

func TestMixedTextExactSize(t *testing.T) {
	for _, size := range []int{1, 100, 4097, 65536} {
		if got := len(MixedText(size)); got != size {
			t.Errorf("MixedText(%d) is %d bytes", size, got)
		}
	}
}

func TestWriteStandardInputs(t *testing.T) {
	dir := t.TempDir()
	inputs, err := WriteStandardInputs(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"chat prompt": ChatPrompt(), "mixed 1 MB": MixedText(MixedTextBytes)}
	if len(inputs) != len(want) {
		t.Fatalf("%d inputs, want %d", len(inputs), len(want))
	}
	for _, in := range inputs {
		data, err := os.ReadFile(in.Path)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != want[in.Name] {
			t.Errorf("%s: file content differs from the generator", in.Name)
		}
	}
}
