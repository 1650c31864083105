package jpeg

import "testing"

func BenchmarkYCCRow(b *testing.B) {
	const w = 1920
	ys, cbs, crs := make([]byte, w), make([]byte, w), make([]byte, w)
	for i := range ys {
		ys[i], cbs[i], crs[i] = byte(i*7), byte(i*13), byte(i*29)
	}
	out := make([]byte, 3*w)
	for b.Loop() {
		yccToRGB(out, ys, cbs, crs)
	}
}

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
