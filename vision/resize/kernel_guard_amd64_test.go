package resize

import (
	"math/rand/v2"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// TestKernelsStayInBuffers ends each vector kernel's rows at an inaccessible page, the rows as short
// as the kernels take without falling back (a source row and rowPad bytes; an output row with the
// slack the kernel set names), so that a load or store past them faults: the horizontal kernels'
// last groups (the AVX-512 one's load moved back inside the row's padding) and the vertical
// kernels' overlapping last steps, with every kernel set this CPU runs.
func TestKernelsStayInBuffers(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no vector kernels on this CPU")
	}
	rng := rand.New(rand.NewPCG(71, 72))
	sizes := [][2]int{{1280, 1288}, {3840, 3836}, {640, 560}, {100, 140}, {43, 64}, {40, 37}, {33, 17}, {1920, 1932}}
	for _, c := range sizes {
		sw, dw := c[0], c[1]
		for _, m := range []Method{Torch, Pillow} {
			var w weights
			w.compute(sw, dw, m, nil)
			src := testImage(rng, sw, 1)
			want := make([]uint8, dw*3)
			horizontal(want, append(src[:len(src):len(src)], make([]uint8, rowPad)...), &w)
			for _, wide := range []bool{true, false} {
				var v hvec
				if !v.build(&w, wide) {
					t.Fatal("no vector tables")
				}
				in := testenv.GuardedPages(t, sw*3+rowPad)
				clear(in[copy(in, src):])
				slack := len(v.start)*3 + 4 - dw*3 // the AVX2 kernels' padded last pixels
				if v.zmm {
					slack = 16
				}
				out := testenv.GuardedPages(t, dw*3+slack)
				horizontalVector(out, in, &w, &v)
				if d := firstDiff(out[:dw*3], want); d >= 0 {
					t.Fatalf("%d -> %d %v wide %v (AVX-512 %v): byte %d differs from the Go kernel's", sw, dw, m, wide, v.zmm, d)
				}
			}
		}
	}
	for _, n := range []int{32, 33, 63, 64, 65, 100, 127, 128, 129, 1288 * 3, 3836 * 3} {
		for _, m := range []Method{Torch, Pillow} {
			for _, hs := range [][2]int{{720, 728}, {3456, 3080}, {480, 420}} {
				var w weights
				w.compute(hs[0], hs[1], m, nil)
				y := hs[1] - 1 // the last output row's weights
				k := w.k[y*w.ksize : y*w.ksize+w.taps]
				rows := make([][]uint8, w.taps)
				plain := make([][]uint8, w.taps)
				for j := range rows {
					rows[j] = testenv.GuardedPages(t, n)
					plain[j] = testImage(rng, n, 1)[:n]
					copy(rows[j], plain[j])
				}
				want := make([]uint8, n)
				vertical(want, plain, k, w.prec, 0)
				for _, wide := range []bool{true, false} {
					out := testenv.GuardedPages(t, n)
					done := verticalVector(out, rows, k, w.prec, wide)
					vertical(out, rows, k, w.prec, done)
					if d := firstDiff(out, want); d >= 0 {
						t.Fatalf("%d bytes, %d taps %v wide %v: byte %d differs from the Go kernel's", n, w.taps, m, wide, d)
					}
				}
			}
		}
	}
}
