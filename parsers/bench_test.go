package parsers

import (
	"fmt"
	"strings"
	"testing"
)

// benchOutput builds a qwen3+hermes output of about n 4-byte tokens: half
// reasoning, half one tool call with a long string argument.
func benchOutput(n int) []string {
	var toks []string
	toks = append(toks, "<think>", "\n")
	for len(toks) < n/2 {
		toks = append(toks, " abc")
	}
	toks = append(toks, "</think>", "\n\n", "<tool_call>", "\n{\"", "name", "\": \"", "write", "\", \"", "arguments", "\": {\"", "text", "\": \"")
	for len(toks) < n-3 {
		toks = append(toks, " de\\n")
	}
	return append(toks, "\"}}", "\n", "</tool_call>")
}

func BenchmarkPushPerToken(b *testing.B) {
	req := mustRequest(b, weatherTools)
	for _, n := range []int{1000, 4000, 16000} {
		toks := benchOutput(n)
		b.Run(fmt.Sprintf("stream/%dk", n/1000), func(b *testing.B) {
			for b.Loop() {
				p, _ := New(qwen3Hermes, testVocab, req, nil)
				for _, t := range toks {
					p.Push(t, nil)
				}
				p.Finish()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(toks)), "ns/token")
		})
		text := strings.Join(toks, "")
		b.Run(fmt.Sprintf("batch/%dk", n/1000), func(b *testing.B) {
			for b.Loop() {
				p, _ := New(qwen3Hermes, testVocab, req, nil)
				p.Push(text, nil)
				p.Finish()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(toks)), "ns/token")
		})
	}
}
