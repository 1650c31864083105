package derender

import (
	"fmt"
	"testing"
)

// BenchmarkChatSession streams the benchmark output one token per Push
// through a ChatSession, the orchestrator's path: nearly every token is
// the session's steady state (reasoning, or a fragment of a long string
// argument).
func BenchmarkChatSession(b *testing.B) {
	for _, n := range []int{1 << 10, 4 << 10} {
		b.Run(fmt.Sprintf("%dk", n>>10), func(b *testing.B) {
			e, cr := benchEngine(b, 0)
			ids := benchOutput(b, e.model, n)
			stop := "stop"
			var one [1]int
			b.ResetTimer()
			for b.Loop() {
				s, err := e.NewChatSession(cr, SessionConfig{Prompt: benchPrompt})
				if err != nil {
					b.Fatal(err)
				}
				for i, id := range ids {
					one[0] = id
					var fin *string
					if i == len(ids)-1 {
						fin = &stop
					}
					s.Push(one[:], nil, fin)
				}
				if !s.Done() {
					b.Fatal("session did not finish")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(ids)), "ns/token")
		})
	}
}
