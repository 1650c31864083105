package jpeg

import "testing"

func BenchmarkH2V2Row(b *testing.B) {
	const n = 960
	near, far := make([]byte, n), make([]byte, n)
	for i := range near {
		near[i], far[i] = byte(i*7), byte(i*13)
	}
	out, sums := make([]byte, 2*n), make([]int32, n)
	for b.Loop() {
		h2v2Fancy(out, near, far, sums)
	}
}
