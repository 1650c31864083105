package parsers

import (
	"fmt"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// BenchmarkProsePerToken streams a reasoning and a long plain answer, as
// a session does (one reused delta), through the engine-gated families
// and hermes for comparison; batch is the same text in one push.
func BenchmarkProsePerToken(b *testing.B) {
	req := mustRequest(b, weatherTools)
	for _, fam := range []struct {
		name string
		cfg  Config
	}{
		{"hermes", qwen3Hermes},
		{"qwen3_coder", Config{ReasoningParser: "qwen3", ToolParser: "qwen3_coder", EnableAutoToolChoice: true}},
		{"minimax_m2", Config{ReasoningParser: "minimax_m2", ToolParser: "minimax_m2", EnableAutoToolChoice: true}},
	} {
		for _, n := range []int{1000, 4000} {
			text := "<think>\nplan it\n</think>\n\n" + boundedProse(n/20)
			var toks []string
			for i := 0; i < len(text); i += 4 {
				toks = append(toks, text[i:min(i+4, len(text))])
			}
			b.Run(fmt.Sprintf("%s/session/%dk", fam.name, n/1000), func(b *testing.B) {
				cpu := testenv.CPUTime(b)
				for b.Loop() {
					p, _ := New(fam.cfg, testVocab, req, nil)
					p.SetStreaming()
					var scratch Delta
					for _, t := range toks {
						scratch = Delta{ToolCalls: scratch.ToolCalls[:0]}
						p.Push(t, &scratch)
					}
					finishDelta(p)
				}
				reportPerToken(b, cpu, len(toks))
			})
			b.Run(fmt.Sprintf("%s/batch/%dk", fam.name, n/1000), func(b *testing.B) {
				cpu := testenv.CPUTime(b)
				for b.Loop() {
					p, _ := New(fam.cfg, testVocab, req, nil)
					pushDelta(p, text)
					finishDelta(p)
				}
				reportPerToken(b, cpu, len(toks))
			})
		}
	}
}
