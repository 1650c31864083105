package resize

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// BenchmarkRGB is the resize alone, at the sizes Qwen2.5-VL's smart_resize picks for common inputs.
func BenchmarkRGB(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, c := range []sizeCase{{640, 480, 644, 476}, {1280, 720, 1288, 728}, {1280, 720, 1288, 720}, {1280, 720, 1280, 728}, {1920, 1080, 1932, 1092}, {4608, 3456, 4116, 3080}} {
		src := testImage(rng, c.sw, c.sh)
		dst := make([]uint8, c.dw*c.dh*3)
		for _, m := range []Method{Torch, Pillow} {
			b.Run(fmt.Sprintf("%dx%d-%dx%d/%v", c.sw, c.sh, c.dw, c.dh, m), func(b *testing.B) {
				benchRGB(b, &Resizer{}, dst, c, src, m)
			})
			// The AVX2 kernels, which run where AVX-512 does not.
			b.Run(fmt.Sprintf("%dx%d-%dx%d/%v/avx2", c.sw, c.sh, c.dw, c.dh, m), func(b *testing.B) {
				benchRGB(b, &Resizer{noAVX512: true}, dst, c, src, m)
			})
			// The Go kernels, which run where the vector ones do not (arm64).
			b.Run(fmt.Sprintf("%dx%d-%dx%d/%v/go", c.sw, c.sh, c.dw, c.dh, m), func(b *testing.B) {
				benchRGB(b, &Resizer{generic: true}, dst, c, src, m)
			})
		}
	}
}

func benchRGB(b *testing.B, r *Resizer, dst []uint8, c sizeCase, src []uint8, m Method) {
	b.ReportAllocs()
	cpu0 := testenv.CPUTime(b)
	for b.Loop() {
		if err := r.RGB(dst, c.dw, c.dh, src, c.sw, c.sh, m); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(testenv.CPUTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkHorizontalRow is one 1280 -> 1288 torch row through each horizontal vector kernel: the
// kernels alone, their weight tables as warm as a resize keeps them.
func BenchmarkHorizontalRow(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	var w weights
	w.compute(1280, 1288, Torch, nil)
	in := append(testImage(rng, 1280, 1), make([]uint8, rowPad)...)
	out := make([]uint8, 1288*3+rowPad)
	for _, wide := range []bool{true, false} {
		var v hvec
		if !v.build(&w, wide) {
			b.Skip("no vector kernels on this CPU")
		}
		b.Run(fmt.Sprintf("avx512=%v", v.avx512()), func(b *testing.B) {
			for b.Loop() {
				horizontalVector(out, in, &w, &v)
			}
		})
	}
}

// BenchmarkRGBNewResizer is a resize by a Resizer new to the size — as a pooled one is after each
// garbage collection — computing its weight tables ("/own") or finding them in a Tables ("/shared").
func BenchmarkRGBNewResizer(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	c := sizeCase{1280, 720, 1288, 728}
	src := testImage(rng, c.sw, c.sh)
	dst := make([]uint8, c.dw*c.dh*3)
	for _, shared := range []bool{false, true} {
		b.Run(fmt.Sprintf("%dx%d-%dx%d/%v/%s", c.sw, c.sh, c.dw, c.dh, Torch, map[bool]string{false: "own", true: "shared"}[shared]), func(b *testing.B) {
			var t Tables
			cpu0 := testenv.CPUTime(b)
			for b.Loop() {
				var r Resizer
				if shared {
					r.UseTables(&t)
				}
				if err := r.RGB(dst, c.dw, c.dh, src, c.sw, c.sh, Torch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(testenv.CPUTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
