package resize

import (
	"math/rand/v2"
	"testing"
)

// resizeBoth runs the vector and the Go kernels on one resize and returns the index of the first
// byte they disagree on, or -1.
func resizeBoth(t *testing.T, src []uint8, sw, sh, dw, dh int, m Method) int {
	t.Helper()
	vec, gen := Resizer{}, Resizer{generic: true}
	// The vector kernels must not write past dst: canary bytes follow it.
	buf := make([]uint8, dw*dh*3+64)
	for i := range buf {
		buf[i] = 0xa5
	}
	a, b := buf[:dw*dh*3:dw*dh*3], make([]uint8, dw*dh*3)
	if err := vec.RGB(a, dw, dh, src, sw, sh, m); err != nil {
		t.Fatal(err)
	}
	for i, v := range buf[len(a):] {
		if v != 0xa5 {
			t.Fatalf("%dx%d -> %dx%d %v: the vector kernels wrote %d bytes past dst", sw, sh, dw, dh, m, i+1)
		}
	}
	if err := gen.RGB(b, dw, dh, src, sw, sh, m); err != nil {
		t.Fatal(err)
	}
	return firstDiff(a, b)
}

// TestVectorMatchesGo: the vector kernels write the Go kernels' bytes, on random sizes and scales
// (every tap count up to a 9x reduction, odd widths for the lone last pixel, rows not a multiple of
// 32 bytes) and on extreme pixels, where the sums reach their bounds.
func TestVectorMatchesGo(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no vector kernels on this CPU: the Go kernels run alone")
	}
	rng := rand.New(rand.NewPCG(21, 22))
	for i := range 300 {
		sw, sh := 1+rng.IntN(200), 1+rng.IntN(120)
		dw, dh := 1+rng.IntN(200), 1+rng.IntN(120)
		if i%3 == 0 { // near the Qwen sizes: scales just above or below one
			dw, dh = sw+rng.IntN(9)-4, sh+rng.IntN(9)-4
			dw, dh = max(dw, 1), max(dh, 1)
		}
		src := testImage(rng, sw, sh)
		switch i % 5 {
		case 1: // black and white stripes overshoot both ways
			for j := range src {
				src[j] = uint8(255 * ((j / 3) % 2))
			}
		case 2:
			for j := range src {
				src[j] = 255
			}
		}
		for _, m := range []Method{Pillow, Torch} {
			if d := resizeBoth(t, src, sw, sh, dw, dh, m); d >= 0 {
				t.Fatalf("%dx%d -> %dx%d %v: byte %d differs between the vector and Go kernels", sw, sh, dw, dh, m, d)
			}
		}
	}
}

// FuzzVectorMatchesGo: any sizes and pixels give the same bytes from both kernels.
func FuzzVectorMatchesGo(f *testing.F) {
	if !hasAVX2 {
		f.Skip("no vector kernels on this CPU")
	}
	f.Add(uint16(1280), uint8(3), uint16(1288), uint8(5), []byte{1, 2, 3})
	f.Add(uint16(7), uint8(1), uint16(1), uint8(9), []byte{255, 0})
	f.Add(uint16(300), uint8(40), uint16(11), uint8(2), []byte{0, 255, 0})
	f.Fuzz(func(t *testing.T, sw uint16, sh uint8, dw uint16, dh uint8, seed []byte) {
		if sw == 0 || sh == 0 || dw == 0 || dh == 0 || sw > 2048 || dw > 2048 {
			return
		}
		src := seededImage(seed, int(sw)*int(sh)*3)
		for _, m := range []Method{Pillow, Torch} {
			if d := resizeBoth(t, src, int(sw), int(sh), int(dw), int(dh), m); d >= 0 {
				t.Fatalf("%dx%d -> %dx%d %v: byte %d differs", sw, sh, dw, dh, m, d)
			}
		}
	})
}

// TestReusedResizer: a Resizer that keeps its weight tables between calls (reusing them when the
// sizes and method repeat, recomputing them when any changes) writes what a fresh Resizer writes, with
// the vector and the Go kernels, over a sequence of sizes that repeats, alternates axes and methods,
// and returns to earlier sizes.
func TestReusedResizer(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	type job struct {
		sw, sh, dw, dh int
		m              Method
	}
	var jobs []job
	for range 60 {
		j := job{1 + rng.IntN(90), 1 + rng.IntN(60), 1 + rng.IntN(90), 1 + rng.IntN(60), Method(1 + rng.IntN(2))}
		jobs = append(jobs, j)
		switch rng.IntN(4) {
		case 0: // the same again
			jobs = append(jobs, j)
		case 1: // one axis changed
			k := j
			k.dw = 1 + rng.IntN(90)
			jobs = append(jobs, k, j)
		case 2: // the other method
			k := j
			k.m = 3 - j.m
			jobs = append(jobs, k, j)
		}
	}
	jobs = append(jobs, jobs[:10]...)
	for _, generic := range []bool{false, true} {
		reused := Resizer{generic: generic}
		for i, j := range jobs {
			src := testImage(rng, j.sw, j.sh)
			got, want := make([]uint8, j.dw*j.dh*3), make([]uint8, j.dw*j.dh*3)
			if err := reused.RGB(got, j.dw, j.dh, src, j.sw, j.sh, j.m); err != nil {
				t.Fatal(err)
			}
			fresh := Resizer{generic: generic}
			if err := fresh.RGB(want, j.dw, j.dh, src, j.sw, j.sh, j.m); err != nil {
				t.Fatal(err)
			}
			if d := firstDiff(got, want); d >= 0 {
				t.Fatalf("job %d %dx%d -> %dx%d %v (generic %v): byte %d differs from a fresh Resizer's", i, j.sw, j.sh, j.dw, j.dh, j.m, generic, d)
			}
		}
	}
}
