package parsers

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/internal/testenv"
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
		// stream is a streaming server's use (SetStreaming, a fresh delta
		// per push); reuse is a session's, which encodes each delta at once
		// and pushes into the same one again.
		for _, mode := range []string{"stream", "reuse"} {
			b.Run(fmt.Sprintf("%s/%dk", mode, n/1000), func(b *testing.B) {
				cpu := testenv.CPUTime(b)
				for b.Loop() {
					p, _ := New(qwen3Hermes, testVocab, req, nil)
					p.SetStreaming()
					var scratch Delta
					for _, t := range toks {
						if mode == "reuse" {
							scratch = Delta{ToolCalls: scratch.ToolCalls[:0]}
							p.Push(t, &scratch)
						} else {
							pushDelta(p, t)
						}
					}
					finishDelta(p)
				}
				reportPerToken(b, cpu, len(toks))
			})
		}
		text := strings.Join(toks, "")
		b.Run(fmt.Sprintf("batch/%dk", n/1000), func(b *testing.B) {
			cpu := testenv.CPUTime(b)
			for b.Loop() {
				p, _ := New(qwen3Hermes, testVocab, req, nil)
				pushDelta(p, text)
				finishDelta(p)
			}
			reportPerToken(b, cpu, len(toks))
		})
	}
}

// reportPerToken reports wall and process CPU time per token since cpu.
func reportPerToken(b *testing.B, cpu time.Duration, tokens int) {
	n := float64(b.N * tokens)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/token")
	b.ReportMetric(float64((testenv.CPUTime(b)-cpu).Nanoseconds())/n, "cpu-ns/token")
}
