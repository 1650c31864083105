package tokenizer

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// loadModel loads a cached test model, skipping when the cache is absent.
func loadModel(t *testing.T, name string) *Tokenizer {
	t.Helper()
	tok, err := Load(filepath.Join(testenv.ModelDir(t, name), "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// goldenEncodings are reference ids for a few chat-shaped strings: without
// and with add_special_tokens.
var goldenEncodings = map[string][]struct {
	text          string
	plain, withSp []int
}{
	"qwen3": {
		{"Hello world! It's 2024.", []int{9707, 1879, 0, 1084, 594, 220, 17, 15, 17, 19, 13}, []int{9707, 1879, 0, 1084, 594, 220, 17, 15, 17, 19, 13}},
		{"  indented\tcode() {\n\treturn x;\n}", []int{220, 1257, 15864, 43343, 368, 341, 853, 856, 280, 92}, []int{220, 1257, 15864, 43343, 368, 341, 853, 856, 280, 92}},
		{"日本語と中文, émoji 😀.", []int{101059, 102819, 19182, 104811, 11, 3958, 6355, 7754, 90316, 13}, []int{101059, 102819, 19182, 104811, 11, 3958, 6355, 7754, 90316, 13}},
		{"<|im_start|>user\nhi<|im_end|>", []int{151644, 872, 198, 6023, 151645}, []int{151644, 872, 198, 6023, 151645}},
		{"<start_of_turn>user\nhi<end_of_turn>", []int{27, 2468, 3575, 37274, 29, 872, 198, 6023, 27, 408, 3575, 37274, 29}, []int{27, 2468, 3575, 37274, 29, 872, 198, 6023, 27, 408, 3575, 37274, 29}},
		{"<｜User｜>hi<｜Assistant｜>", []int{27, 130957, 1474, 130957, 29, 6023, 27, 130957, 71703, 130957, 29}, []int{27, 130957, 1474, 130957, 29, 6023, 27, 130957, 71703, 130957, 29}},
		{"<|begin_of_text|><|start_header_id|>user<|end_header_id|>", []int{27, 91, 7265, 3575, 4326, 91, 1784, 91, 2468, 8757, 842, 91, 29, 872, 27, 91, 408, 8757, 842, 91, 29}, []int{27, 91, 7265, 3575, 4326, 91, 1784, 91, 2468, 8757, 842, 91, 29, 872, 27, 91, 408, 8757, 842, 91, 29}},
		{"<|start|>user<|message|>hi<|end|>", []int{27, 91, 2468, 91, 29, 872, 27, 91, 1994, 91, 29, 6023, 27, 91, 408, 91, 29}, []int{27, 91, 2468, 91, 29, 872, 27, 91, 1994, 91, 29, 6023, 27, 91, 408, 91, 29}},
	},
	"llama3_1": {
		{"Hello world! It's 2024.", []int{9906, 1917, 0, 1102, 596, 220, 2366, 19, 13}, []int{128000, 9906, 1917, 0, 1102, 596, 220, 2366, 19, 13}},
		{"  indented\tcode() {\n\treturn x;\n}", []int{220, 1280, 16243, 44443, 368, 341, 862, 865, 280, 92}, []int{128000, 220, 1280, 16243, 44443, 368, 341, 862, 865, 280, 92}},
		{"日本語と中文, émoji 😀.", []int{102433, 102158, 19732, 108891, 11, 4046, 6489, 7910, 91416, 13}, []int{128000, 102433, 102158, 19732, 108891, 11, 4046, 6489, 7910, 91416, 13}},
		{"<|im_start|>user\nhi<|im_end|>", []int{27, 91, 318, 5011, 91, 29, 882, 198, 6151, 27, 91, 318, 6345, 91, 29}, []int{128000, 27, 91, 318, 5011, 91, 29, 882, 198, 6151, 27, 91, 318, 6345, 91, 29}},
		{"<start_of_turn>user\nhi<end_of_turn>", []int{27, 2527, 3659, 38374, 29, 882, 198, 6151, 27, 408, 3659, 38374, 29}, []int{128000, 27, 2527, 3659, 38374, 29, 882, 198, 6151, 27, 408, 3659, 38374, 29}},
		{"<｜User｜>hi<｜Assistant｜>", []int{27, 104926, 1502, 104926, 29, 6151, 27, 104926, 72803, 104926, 29}, []int{128000, 27, 104926, 1502, 104926, 29, 6151, 27, 104926, 72803, 104926, 29}},
		{"<|begin_of_text|><|start_header_id|>user<|end_header_id|>", []int{128000, 128006, 882, 128007}, []int{128000, 128000, 128006, 882, 128007}},
		{"<|start|>user<|message|>hi<|end|>", []int{27, 91, 2527, 91, 29, 882, 27, 91, 2037, 91, 29, 6151, 27, 91, 408, 91, 29}, []int{128000, 27, 91, 2527, 91, 29, 882, 27, 91, 2037, 91, 29, 6151, 27, 91, 408, 91, 29}},
	},
	"deepseek_v3": {
		{"Hello world! It's 2024.", []int{19923, 2058, 3, 983, 734, 223, 939, 22, 16}, []int{19923, 2058, 3, 983, 734, 223, 939, 22, 16}},
		{"  indented\tcode() {\n\treturn x;\n}", []int{223, 1126, 19686, 200, 8308, 1393, 875, 5562, 1527, 510, 95}, []int{223, 1126, 19686, 200, 8308, 1393, 875, 5562, 1527, 510, 95}},
		{"日本語と中文, émoji 😀.", []int{88768, 2495, 21134, 14, 2678, 7129, 7063, 53769, 225, 16}, []int{88768, 2495, 21134, 14, 2678, 7129, 7063, 53769, 225, 16}},
		{"<|im_start|>user\nhi<|im_end|>", []int{30, 94, 328, 37864, 94, 32, 5265, 201, 6366, 30, 94, 328, 42616, 94, 32}, []int{30, 94, 328, 37864, 94, 32, 5265, 201, 6366, 30, 94, 328, 42616, 94, 32}},
		{"<start_of_turn>user\nhi<end_of_turn>", []int{30, 10513, 19704, 3682, 849, 32, 5265, 201, 6366, 30, 523, 19704, 3682, 849, 32}, []int{30, 10513, 19704, 3682, 849, 32, 5265, 201, 6366, 30, 523, 19704, 3682, 849, 32}},
		{"<｜User｜>hi<｜Assistant｜>", []int{128803, 6366, 128804}, []int{128803, 6366, 128804}},
		{"<|begin_of_text|><|start_header_id|>user<|end_header_id|>", []int{30, 94, 8277, 19704, 19053, 94, 5451, 94, 10513, 80478, 5165, 94, 32, 5265, 30, 94, 523, 80478, 5165, 94, 32}, []int{30, 94, 8277, 19704, 19053, 94, 5451, 94, 10513, 80478, 5165, 94, 32, 5265, 30, 94, 523, 80478, 5165, 94, 32}},
		{"<|start|>user<|message|>hi<|end|>", []int{30, 94, 10513, 94, 32, 5265, 30, 94, 20400, 94, 32, 6366, 30, 94, 523, 94, 32}, []int{30, 94, 10513, 94, 32, 5265, 30, 94, 20400, 94, 32, 6366, 30, 94, 523, 94, 32}},
	},
	"gptoss": {
		{"Hello world! It's 2024.", []int{13225, 2375, 0, 7744, 220, 1323, 19, 13}, []int{13225, 2375, 0, 7744, 220, 1323, 19, 13}},
		{"  indented\tcode() {\n\treturn x;\n}", []int{220, 1383, 23537, 86873, 416, 405, 1393, 1215, 307, 92}, []int{220, 1383, 23537, 86873, 416, 405, 1393, 1215, 307, 92}},
		{"日本語と中文, émoji 😀.", []int{9048, 40909, 5330, 10667, 11, 1212, 3690, 4133, 88038, 13}, []int{9048, 40909, 5330, 10667, 11, 1212, 3690, 4133, 88038, 13}},
		{"<|im_start|>user\nhi<|im_end|>", []int{27, 91, 321, 10949, 91, 29, 1428, 198, 3686, 27, 91, 321, 13707, 91, 29}, []int{27, 91, 321, 10949, 91, 29, 1428, 198, 3686, 27, 91, 321, 13707, 91, 29}},
		{"<start_of_turn>user\nhi<end_of_turn>", []int{27, 5236, 8023, 89223, 29, 1428, 198, 3686, 27, 419, 8023, 89223, 29}, []int{27, 5236, 8023, 89223, 29, 1428, 198, 3686, 27, 419, 8023, 89223, 29}},
		{"<｜User｜>hi<｜Assistant｜>", []int{27, 40105, 1844, 40105, 29, 3686, 27, 40105, 91655, 40105, 29}, []int{27, 40105, 1844, 40105, 29, 3686, 27, 40105, 91655, 40105, 29}},
		{"<|begin_of_text|><|start_header_id|>user<|end_header_id|>", []int{27, 91, 15563, 8023, 9118, 91, 3784, 91, 5236, 20184, 1537, 91, 29, 1428, 27, 91, 419, 20184, 1537, 91, 29}, []int{27, 91, 15563, 8023, 9118, 91, 3784, 91, 5236, 20184, 1537, 91, 29, 1428, 27, 91, 419, 20184, 1537, 91, 29}},
		{"<|start|>user<|message|>hi<|end|>", []int{200006, 1428, 200008, 3686, 200007}, []int{200006, 1428, 200008, 3686, 200007}},
	},
	"gemma3": {
		{"Hello world! It's 2024.", []int{9259, 1902, 236888, 1030, 236789, 236751, 236743, 236778, 236771, 236778, 236812, 236761}, []int{2, 9259, 1902, 236888, 1030, 236789, 236751, 236743, 236778, 236771, 236778, 236812, 236761}},
		{"  indented\tcode() {\n\treturn x;\n}", []int{138, 724, 16764, 255968, 3970, 825, 642, 107, 255968, 2060, 1123, 236793, 107, 236783}, []int{2, 138, 724, 16764, 255968, 3970, 825, 642, 107, 255968, 2060, 1123, 236793, 107, 236783}},
		{"日本語と中文, émoji 😀.", []int{94951, 237032, 55041, 236764, 1559, 58197, 163543, 236761}, []int{2, 94951, 237032, 55041, 236764, 1559, 58197, 163543, 236761}},
		{"<|im_start|>user\nhi<|im_end|>", []int{236820, 236909, 548, 236779, 3041, 111038, 2364, 107, 2202, 236820, 236909, 548, 236779, 643, 111038}, []int{2, 236820, 236909, 548, 236779, 3041, 111038, 2364, 107, 2202, 236820, 236909, 548, 236779, 643, 111038}},
		{"<start_of_turn>user\nhi<end_of_turn>", []int{105, 2364, 107, 2202, 106}, []int{2, 105, 2364, 107, 2202, 106}},
		{"<｜User｜>hi<｜Assistant｜>", []int{236820, 240214, 2887, 240214, 236813, 2202, 236820, 240214, 74314, 240214, 236813}, []int{2, 236820, 240214, 2887, 240214, 236813, 2202, 236820, 240214, 74314, 240214, 236813}},
		{"<|begin_of_text|><|start_header_id|>user<|end_header_id|>", []int{236820, 236909, 1906, 236779, 1340, 236779, 1005, 236909, 1798, 236909, 3041, 236779, 5653, 236779, 547, 111038, 2364, 236820, 236909, 643, 236779, 5653, 236779, 547, 111038}, []int{2, 236820, 236909, 1906, 236779, 1340, 236779, 1005, 236909, 1798, 236909, 3041, 236779, 5653, 236779, 547, 111038, 2364, 236820, 236909, 643, 236779, 5653, 236779, 547, 111038}},
		{"<|start|>user<|message|>hi<|end|>", []int{236820, 236909, 3041, 111038, 2364, 236820, 236909, 4375, 111038, 2202, 236820, 236909, 643, 111038}, []int{2, 236820, 236909, 3041, 111038, 2364, 236820, 236909, 4375, 111038, 2202, 236820, 236909, 643, 111038}},
	},
}

func TestModelsGolden(t *testing.T) {
	for name, cases := range goldenEncodings {
		t.Run(name, func(t *testing.T) {
			tok := loadModel(t, name)
			for _, c := range cases {
				if got := tok.Encode(c.text, false); !slices.Equal(got, c.plain) {
					t.Errorf("Encode(%q, false) = %v, want %v", c.text, got, c.plain)
				}
				if got := tok.Encode(c.text, true); !slices.Equal(got, c.withSp) {
					t.Errorf("Encode(%q, true) = %v, want %v", c.text, got, c.withSp)
				}
				if got := tok.Decode(c.plain, false); got != c.text {
					t.Errorf("Decode(Encode(%q)) = %q", c.text, got)
				}
			}
		})
	}
}

// TestGemmaWordCuts checks computeBoundary on the real Gemma 3 vocabulary
// (one token, ">▁</", spans a "▁"): cutting words must not change ids.
func TestGemmaWordCuts(t *testing.T) {
	tok := loadModel(t, "gemma3")
	m := tok.model
	if m.boundaryRune != '▁' || !m.boundaryUnsafe['>'] || m.boundaryUnsafe['a'] {
		t.Fatalf("boundary %q, unsafe['>']=%v unsafe['a']=%v", m.boundaryRune, m.boundaryUnsafe['>'], m.boundaryUnsafe['a'])
	}
	pieces := []string{"▁", "▁▁", "hello", "<", ">", "</", "div", "é", "中文", "😀", "1", "\u0301", "\x01", ",", "the"}
	rng := rand.New(rand.NewPCG(4, 4))
	for i := 0; i < 300; i++ {
		var b strings.Builder
		for n := 1 + rng.IntN(30); n > 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		word := b.String()
		got := m.tokenizeCut(word, nil, &bpeScratch{})
		want := m.mergeWord(word, false, newWordCache(), nil, &bpeScratch{})
		if !slices.Equal(got, want) {
			t.Fatalf("%q: cut %v, whole %v", word, got, want)
		}
	}
}

// TestConcurrentEncodeDecode shares one tokenizer between goroutines (run
// with -race): results must match a sequential run.
func TestConcurrentEncodeDecode(t *testing.T) {
	tok := loadModel(t, "qwen3")
	var texts []string
	for i := 0; i < 200; i++ {
		texts = append(texts, strings.Repeat("word"+string(rune('a'+i%26))+" ", i%7+1)+"<|im_end|> 123")
	}
	want := make([][]int, len(texts))
	for i, s := range texts {
		want[i] = tok.Encode(s, true)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := range texts {
				j := (i*7 + g*13) % len(texts)
				if got := tok.Encode(texts[j], true); !slices.Equal(got, want[j]) {
					t.Errorf("Encode(%q) = %v, want %v", texts[j], got, want[j])
					return
				}
				if got := tok.Decode(want[j], false); got != texts[j] {
					t.Errorf("Decode = %q, want %q", got, texts[j])
					return
				}
			}
		}(g)
	}
	wg.Wait()
}

func TestInvalidUTF8Input(t *testing.T) {
	tok := loadModel(t, "qwen3")
	// Invalid bytes become U+FFFD before tokenization, as a Rust &str
	// could not hold them.
	got := tok.Encode("a\xffb\xe2\x82", false)
	want := tok.Encode("a\ufffdb\ufffd", false)
	if !slices.Equal(got, want) {
		t.Errorf("Encode(invalid) = %v, want %v", got, want)
	}
}
