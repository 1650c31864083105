package derender

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// benchStopStrings is the issue 19 shape: 4,000 random stops of 1,000
// lowercase letters.
func benchStopStrings() []string {
	r := rand.New(rand.NewPCG(19, 5))
	stops := make([]string, 4000)
	for i := range stops {
		var sb strings.Builder
		for range 1000 {
			sb.WriteByte(byte('a' + r.IntN(26)))
		}
		stops[i] = sb.String()
	}
	return stops
}

func BenchmarkStopTextPush(b *testing.B) {
	st := newStopText(StopConfig{Stop: benchStopStrings()})
	pieces := strings.Fields("the quick brown fox jumps over the lazy dog and then some more words follow here")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := pieces[i%len(pieces)]
		st.push(p, len(p), true, false)
	}
}

func BenchmarkStopTextSetup(b *testing.B) {
	stops := benchStopStrings()
	b.ReportAllocs()
	for b.Loop() {
		newStopText(StopConfig{Stop: stops})
	}
}
