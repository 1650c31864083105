package resize

import (
	"math"
	"math/rand/v2"
	"testing"
)

// referenceRGB is the resize written the plain way, for the differential tests of the fast loops
// (zero-padded fixed spans, the four-tap unrolling, red and blue sharing an int64, four-row vertical
// steps): every output pixel sums its own unpadded span channel by channel, straight from the
// definition of each method.
func referenceRGB(src []uint8, sw, sh, dw, dh int, m Method) []uint8 {
	img, w := src, sw
	if dw != sw {
		img = referencePass(img, w, sh, dw, m, true)
		w = dw
	}
	if dh != sh {
		img = referencePass(img, w, sh, dh, m, false)
	}
	return img
}

// referencePass resamples one axis of a w x h image to out samples.
func referencePass(img []uint8, w, h, out int, m Method, horiz bool) []uint8 {
	in := h
	if horiz {
		in = w
	}
	scale := float64(in) / float64(out)
	fs := math.Max(scale, 1)
	support := 2 * fs
	type span struct {
		lo int
		k  []float64
		q  []int64 // k quantised
	}
	spans := make([]span, out)
	wmax := 0.0
	for i := range spans {
		center := (float64(i) + 0.5) * scale
		lo := int(center - support + 0.5)
		if lo < 0 {
			lo = 0
		}
		hi := int(center + support + 0.5)
		if hi > in {
			hi = in
		}
		if limit := int(math.Ceil(support))*2 + 1; hi-lo > limit {
			hi = lo + limit
		}
		var ks []float64
		sum := 0.0
		for x := lo; x < hi; x++ {
			var v float64
			if m == Pillow {
				v = pillowCubic((float64(x) - center + 0.5) / fs)
			} else {
				v = torchCubic((float64(x) - center + 0.5) / fs)
			}
			ks = append(ks, v)
			sum += v
		}
		for j := range ks {
			if sum != 0 {
				ks[j] /= sum
				wmax = math.Max(wmax, ks[j])
			}
		}
		spans[i] = span{lo: lo, k: ks}
	}
	bits := 22
	if m == Torch {
		bits = 0
		for bits < 22 && int(0.5+wmax*math.Exp2(float64(bits+1))) < 1<<15 {
			bits++
		}
	}
	for i := range spans {
		for _, v := range spans[i].k {
			v *= math.Exp2(float64(bits))
			if v < 0 {
				v -= 0.5
			} else {
				v += 0.5
			}
			spans[i].q = append(spans[i].q, int64(int32(v)))
		}
	}
	ow, oh := out, h
	if !horiz {
		ow, oh = w, out
	}
	res := make([]uint8, ow*oh*3)
	for y := range oh {
		for x := range ow {
			for c := range 3 {
				acc := int64(1) << (bits - 1)
				i := x
				if !horiz {
					i = y
				}
				for j, kv := range spans[i].q {
					var px uint8
					if horiz {
						px = img[(y*w+spans[i].lo+j)*3+c]
					} else {
						px = img[((spans[i].lo+j)*w+x)*3+c]
					}
					acc += int64(px) * kv
				}
				v := acc >> bits
				res[(y*ow+x)*3+c] = uint8(min(max(v, 0), 255))
			}
		}
	}
	return res
}

func TestMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, set := range kernelSets() {
		testMatchesReference(t, rng, &set.r)
	}
}

// testMatchesReference compares r's kernels (the vector ones where they run, or the Go ones) with the
// plain resize.
func testMatchesReference(t *testing.T, rng *rand.Rand, r *Resizer) {
	for _, c := range liveCases(rng) {
		if c.sw*c.sh > 400*400 || c.dw*c.dh > 400*400 {
			continue // the large cases add time, not coverage: every loop shape occurs below this size
		}
		src := testImage(rng, c.sw, c.sh)
		for _, m := range []Method{Pillow, Torch} {
			got := make([]uint8, c.dw*c.dh*3)
			if err := r.RGB(got, c.dw, c.dh, src, c.sw, c.sh, m); err != nil {
				t.Fatal(err)
			}
			if d := firstDiff(got, referenceRGB(src, c.sw, c.sh, c.dw, c.dh, m)); d >= 0 {
				t.Fatalf("%v %v (generic kernels %v, noAVX512 %v): byte %d differs from the plain resize", c, m, r.generic, r.noAVX512, d)
			}
		}
	}
}

// FuzzRGB: any sizes and pixels resize without panicking, with both methods equal to the plain
// resize.
func FuzzRGB(f *testing.F) {
	f.Add(uint8(56), uint8(30), uint8(56), uint8(84), []byte{1, 2, 3})
	f.Add(uint8(1), uint8(1), uint8(9), uint8(1), []byte{255})
	f.Add(uint8(200), uint8(3), uint8(7), uint8(2), []byte{0, 255, 0})
	var r Resizer
	f.Fuzz(func(t *testing.T, sw, sh, dw, dh uint8, seed []byte) {
		if sw == 0 || sh == 0 || dw == 0 || dh == 0 {
			return
		}
		src := seededImage(seed, int(sw)*int(sh)*3)
		for _, m := range []Method{Pillow, Torch} {
			got := make([]uint8, int(dw)*int(dh)*3)
			if err := r.RGB(got, int(dw), int(dh), src, int(sw), int(sh), m); err != nil {
				t.Fatal(err)
			}
			if d := firstDiff(got, referenceRGB(src, int(sw), int(sh), int(dw), int(dh), m)); d >= 0 {
				t.Fatalf("%dx%d -> %dx%d %v: byte %d differs from the plain resize", sw, sh, dw, dh, m, d)
			}
		}
	})
}

// seededImage is n bytes of a fuzzer's seed repeated and scrambled (zeros for an empty seed).
func seededImage(seed []byte, n int) []uint8 {
	src := make([]uint8, n)
	for i := range src {
		if len(seed) > 0 {
			src[i] = seed[i%len(seed)] ^ uint8(i*31)
		}
	}
	return src
}
