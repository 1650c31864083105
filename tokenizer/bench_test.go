package tokenizer_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/tokenizer"
)

// benchModels are the cached test models, in the order benchmarks report them.
var benchModels = []string{"qwen3", "llama3_1", "deepseek_v3", "gptoss", "gemma3"}

// benchCorpusSize is the size of the mixed benchmark text.
const benchCorpusSize = 300 << 10

// benchCorpus returns a deterministic mixed text of about benchCorpusSize
// bytes: English prose, source code, numbers, several scripts and emoji,
// in the proportions of chat traffic rather than of a clean book.
var benchCorpus = sync.OnceValue(func() string {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields(`the of and to a in is it you that he was for on are with as I his they be at one
		have this from or had by hot word but what some we can out other were all there when up use your how said
		an each she which do their time if will way about many then them write would like so these her long make
		thing see him two has look more day could go come did number sound no most people my over know water than
		call first who may down side been now find any new work part take get place made live where after back little
		only round man year came show every good me give our under name very through just form sentence great think
		say help low line differ turn cause much mean before move right boy old too same tell does set three want air
		well also play small end put home read hand port large spell add even land here must big high such follow act
		why ask men change went light kind off need house picture try us again animal point mother world near build
		self earth father tokenizer model server request stream latency throughput vocabulary merge`)
	code := []string{
		"func (s *Server) Handle(w http.ResponseWriter, r *http.Request) {\n\tif err := s.check(r); err != nil {\n\t\thttp.Error(w, err.Error(), 400)\n\t\treturn\n\t}\n}\n",
		"def fib(n: int) -> int:\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n\n",
		"{\"model\": \"qwen3\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"max_tokens\": 128}\n",
		"for (let i = 0; i < arr.length; i++) { total += arr[i] * 2; } // sum\n",
		"SELECT id, name FROM users WHERE created_at >= '2024-01-01' ORDER BY id DESC LIMIT 50;\n",
		"  - name: build\n    run: go build ./... && go test -race ./...\n",
	}
	scripts := []string{
		"東京は日本の首都であり、世界で最も人口の多い都市圏の一つです。",
		"机器学习模型需要大量的数据来进行训练和评估。",
		"한국어 문장은 띄어쓰기를 사용합니다.",
		"Быстрая коричневая лиса прыгает через ленивую собаку.",
		"Größere Straßen führen über die Brücke nach Köln.",
		"L'été dernier, nous sommes allés à la plage.",
		"مرحبا بالعالم، هذا نص تجريبي.",
		"यह एक परीक्षण वाक्य है।",
		"Το γρήγορο καφέ αλεπού πηδάει.",
		"Emoji: 😀 👍🏽 🎉 ❤️‍🔥 🇫🇷 — “quoted” text… ½ ² ①",
	}
	var b strings.Builder
	for b.Len() < benchCorpusSize {
		switch r := rng.IntN(10); {
		case r < 6:
			n := 8 + rng.IntN(25)
			for i := 0; i < n; i++ {
				w := words[rng.IntN(len(words))]
				if i == 0 {
					w = strings.ToUpper(w[:1]) + w[1:]
				}
				b.WriteString(w)
				switch rng.IntN(12) {
				case 0:
					b.WriteString(", ")
				case 1:
					b.WriteString("'s ")
				default:
					b.WriteByte(' ')
				}
			}
			b.WriteString([]string{".", "?", "!", ". ", ".\n\n"}[rng.IntN(5)])
			if rng.IntN(4) == 0 {
				fmt.Fprintf(&b, " %d items cost $%d.%02d on %d-%02d-%02d. ", rng.IntN(10000), rng.IntN(500), rng.IntN(100), 2000+rng.IntN(30), 1+rng.IntN(12), 1+rng.IntN(28))
			}
		case r < 8:
			b.WriteString("\n")
			b.WriteString(code[rng.IntN(len(code))])
		default:
			b.WriteString(scripts[rng.IntN(len(scripts))])
			b.WriteByte(' ')
		}
	}
	return b.String()
})

// benchDocs cuts the corpus into chat-message sized documents (0.5-4 KB).
var benchDocs = sync.OnceValue(func() []string {
	text := benchCorpus()
	rng := rand.New(rand.NewPCG(3, 4))
	var docs []string
	for len(text) > 0 {
		n := min(len(text), 512+rng.IntN(3584))
		for n < len(text) && !isRuneStart(text[n]) {
			n++
		}
		docs = append(docs, text[:n])
		text = text[n:]
	}
	return docs
})

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// benchLoaded keeps each model loaded once per test binary: b.Run calls a
// benchmark function several times and loading must not be measured.
var benchLoaded sync.Map // model name -> *tokenizer.Tokenizer

func loadBenchModel(b testing.TB, name string) *tokenizer.Tokenizer {
	b.Helper()
	if tok, ok := benchLoaded.Load(name); ok {
		return tok.(*tokenizer.Tokenizer)
	}
	tok, err := tokenizer.Load(filepath.Join(testenv.ModelDir(b, name), "tokenizer.json"))
	if err != nil {
		b.Fatal(err)
	}
	// These benchmarks repeat one input: they measure the encoder, not the
	// segment cache (BenchmarkSegmentCache does).
	tok.SetSegmentCacheSize(0)
	benchLoaded.Store(name, tok)
	return tok
}

// BenchmarkEncode encodes the whole mixed corpus in one call.
func BenchmarkEncode(b *testing.B) {
	text := benchCorpus()
	for _, name := range benchModels {
		b.Run(name, func(b *testing.B) {
			tok := loadBenchModel(b, name)
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			ids := 0
			for b.Loop() {
				ids = len(tok.Encode(text, false))
			}
			b.ReportMetric(float64(ids), "tokens")
		})
	}
}

// BenchmarkEncodeDocs encodes the corpus as chat-message sized documents,
// one call each.
func BenchmarkEncodeDocs(b *testing.B) {
	docs := benchDocs()
	total := 0
	for _, d := range docs {
		total += len(d)
	}
	for _, name := range benchModels {
		b.Run(name, func(b *testing.B) {
			tok := loadBenchModel(b, name)
			b.SetBytes(int64(total))
			b.ReportAllocs()
			for b.Loop() {
				for _, d := range docs {
					tok.Encode(d, true)
				}
			}
		})
	}
}

// BenchmarkDecode decodes the ids of the corpus, cut into documents.
func BenchmarkDecode(b *testing.B) {
	docs := benchDocs()
	for _, name := range benchModels {
		b.Run(name, func(b *testing.B) {
			tok := loadBenchModel(b, name)
			var seqs [][]int
			total := 0
			for _, d := range docs {
				seqs = append(seqs, tok.Encode(d, true))
				total += len(d)
			}
			b.SetBytes(int64(total))
			b.ReportAllocs()
			for b.Loop() {
				for _, s := range seqs {
					tok.Decode(s, true)
				}
			}
		})
	}
}

// BenchmarkLoad measures loading tokenizer.json from disk.
func BenchmarkLoad(b *testing.B) {
	for _, name := range benchModels {
		b.Run(name, func(b *testing.B) {
			path := filepath.Join(testenv.ModelDir(b, name), "tokenizer.json")
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tokenizer.Load(path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// maxLoadedHeap is the acceptance bar for the live heap of a loaded Qwen3
// tokenizer; the other models are reported only.
const maxLoadedHeap = 64 << 20

// TestLoadFootprint reports each model's load time and the live heap it
// holds once loaded (after GC), and enforces the Qwen3 heap bar.
func TestLoadFootprint(t *testing.T) {
	for _, name := range benchModels {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(testenv.ModelDir(t, name), "tokenizer.json")
			before := liveHeap()
			start := time.Now()
			tok, err := tokenizer.Load(path)
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			// The word caches fill with use: measure after some traffic.
			for _, d := range benchDocs()[:20] {
				tok.Encode(d, true)
			}
			heap := liveHeap() - before
			runtime.KeepAlive(tok)
			t.Logf("%s: load %v, live heap %.1f MB", name, took.Round(time.Millisecond), float64(heap)/(1<<20))
			if name == "qwen3" && heap > maxLoadedHeap {
				t.Errorf("qwen3 live heap %d bytes, want <= %d", heap, maxLoadedHeap)
			}
		})
	}
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
