package split

import (
	"math/rand/v2"
	"strings"
	"testing"
)

var proseWords = strings.Fields(`the of and to in is that it for was on are as with his they at be this from have or by
one had not but what all were when we there can an your which their said if do will each about how up out them then
she many some so these would other into has more her two like him see time could no make than first been its who now
people my made over did down only way find use may water long little very after words called just where most know
Model Tokenizer Python Hugging Face OpenAI API JSON HTTP server request response latency throughput`)

// benchText returns about n bytes of deterministic text: English prose, or
// prose mixed with code, numbers, accented and non-Latin scripts and emoji.
func benchText(n int, mixed bool) string {
	rng := rand.New(rand.NewPCG(7, 7))
	extras := []string{"café naïve", "中文分词测试", "日本語のテキスト", "Привет мир", "مرحبا بالعالم", "नमस्ते",
		"😀 👍🏽", "x := f(a, b) // comment", "3.14159", "2024-05-01", "don't", "I'LL", "\n\n", "    indented"}
	var b strings.Builder
	for b.Len() < n {
		sentence := 4 + rng.IntN(14)
		for i := range sentence {
			w := proseWords[rng.IntN(len(proseWords))]
			if i == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			} else {
				b.WriteByte(' ')
			}
			b.WriteString(w)
			switch rng.IntN(20) {
			case 0:
				b.WriteByte(',')
			case 1:
				b.WriteString("'s")
			case 2:
				if mixed {
					b.WriteByte(' ')
					b.WriteString(extras[rng.IntN(len(extras))])
				}
			}
		}
		b.WriteString(". ")
		if rng.IntN(6) == 0 {
			b.WriteString("\n\n")
		}
	}
	return b.String()
}

func BenchmarkScan(b *testing.B) {
	texts := []struct {
		name string
		text string
	}{
		{"prose", benchText(1<<20, false)},
		{"mixed", benchText(1<<20, true)},
	}
	for _, tp := range testPatterns {
		f, _ := Lookup(tp.pattern)
		for _, tx := range texts {
			b.Run(tp.name+"/"+tx.name, func(b *testing.B) {
				dst := make([]int, 0, len(tx.text))
				b.SetBytes(int64(len(tx.text)))
				b.ReportAllocs()
				for b.Loop() {
					dst = f(tx.text, dst[:0])
				}
			})
		}
	}
}

// BenchmarkRegexp2 measures the oracle on the mixed text, for comparison.
func BenchmarkRegexp2(b *testing.B) {
	text := benchText(1<<20, true)
	for _, tp := range testPatterns {
		re := compileOracle(b, tp.pattern)
		b.Run(tp.name+"/mixed", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if _, err := oracleMatches(re, text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
