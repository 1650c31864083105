package resize

import (
	"math/rand/v2"
	"testing"
)

type kernelSet struct {
	name string
	r    Resizer
}

// kernelSets are the kernel choices a Resizer can be forced to on this machine: the best vector
// kernels (AVX-512 where the CPU has it), the AVX2 ones, and the Go ones.
func kernelSets() []kernelSet {
	return []kernelSet{{"best", Resizer{}}, {"avx2", Resizer{noAVX512: true}}, {"go", Resizer{generic: true}}}
}

// resizeBoth runs every vector kernel set and the Go kernels on one resize and returns the index of
// the first byte a vector set disagrees with the Go kernels on, or -1.
func resizeBoth(t *testing.T, src []uint8, sw, sh, dw, dh int, m Method) int {
	t.Helper()
	gen := Resizer{generic: true}
	b := make([]uint8, dw*dh*3)
	if err := gen.RGB(b, dw, dh, src, sw, sh, m); err != nil {
		t.Fatal(err)
	}
	for _, vec := range []Resizer{{}, {noAVX512: true}} {
		// The vector kernels must not write past dst: canary bytes follow it.
		buf := make([]uint8, dw*dh*3+64)
		for i := range buf {
			buf[i] = 0xa5
		}
		a := buf[: dw*dh*3 : dw*dh*3]
		if err := vec.RGB(a, dw, dh, src, sw, sh, m); err != nil {
			t.Fatal(err)
		}
		for i, v := range buf[len(a):] {
			if v != 0xa5 {
				t.Fatalf("%dx%d -> %dx%d %v (noAVX512 %v): the vector kernels wrote %d bytes past dst", sw, sh, dw, dh, m, vec.noAVX512, i+1)
			}
		}
		if d := firstDiff(a, b); d >= 0 {
			return d
		}
	}
	return -1
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
	for _, set := range kernelSets() {
		reused := set.r
		for i, j := range jobs {
			src := testImage(rng, j.sw, j.sh)
			got, want := make([]uint8, j.dw*j.dh*3), make([]uint8, j.dw*j.dh*3)
			if err := reused.RGB(got, j.dw, j.dh, src, j.sw, j.sh, j.m); err != nil {
				t.Fatal(err)
			}
			fresh := set.r
			if err := fresh.RGB(want, j.dw, j.dh, src, j.sw, j.sh, j.m); err != nil {
				t.Fatal(err)
			}
			if d := firstDiff(got, want); d >= 0 {
				t.Fatalf("job %d %dx%d -> %dx%d %v (%s kernels): byte %d differs from a fresh Resizer's", i, j.sw, j.sh, j.dw, j.dh, j.m, set.name, d)
			}
		}
	}
}

// TestVectorEdges: every width up to 140 pixels, enlarged from a few sizes below it and reduced from a
// few above (the AVX-512 horizontal kernels' sixteen-pixel groups and their tails, four and six taps, the vertical kernels' 32- and 64-byte
// steps and their overlapping last steps, rows shorter than a step), one-pixel images, and each axis
// alone; all kernel sets write the Go kernels' bytes and the plain resize's.
func TestVectorEdges(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for dw := 1; dw <= 140; dw++ {
		for _, sw := range []int{dw, dw - 1, dw - 3, dw * 2 / 3, dw / 4, 1, dw + 1, dw * 5 / 4, dw * 3 / 2} {
			if sw < 1 {
				continue
			}
			for _, hs := range [][2]int{{3, 5}, {4, 4}, {1, 2}, {9, 8}} {
				sh, dh := hs[0], hs[1]
				src := testImage(rng, sw, sh)
				for _, m := range []Method{Torch, Pillow} {
					if d := resizeBoth(t, src, sw, sh, dw, dh, m); d >= 0 {
						t.Fatalf("%dx%d -> %dx%d %v: byte %d differs between the vector and Go kernels", sw, sh, dw, dh, m, d)
					}
					got := make([]uint8, dw*dh*3)
					var r Resizer
					if err := r.RGB(got, dw, dh, src, sw, sh, m); err != nil {
						t.Fatal(err)
					}
					if d := firstDiff(got, referenceRGB(src, sw, sh, dw, dh, m)); d >= 0 {
						t.Fatalf("%dx%d -> %dx%d %v: byte %d differs from the plain resize", sw, sh, dw, dh, m, d)
					}
				}
			}
		}
	}
}

// TestAVX512Taken: the AVX-512 horizontal kernels serve torch's enlargements and mild reductions (the
// Qwen sizes) on a CPU that has them, so the differential tests above test them; Pillow's split
// weights keep AVX2's.
func TestAVX512Taken(t *testing.T) {
	if !hasAVX512 {
		t.Skip("no AVX-512 kernels on this CPU")
	}
	rng := rand.New(rand.NewPCG(51, 52))
	for _, c := range []sizeCase{{1280, 720, 1288, 728}, {640, 480, 644, 476}, {1920, 1080, 1932, 1092}, {28, 28, 56, 56}, {3840, 2160, 3836, 2156}, {640, 480, 560, 420}} {
		src := testImage(rng, c.sw, c.sh)
		dst := make([]uint8, c.dw*c.dh*3)
		for _, m := range []Method{Torch, Pillow} {
			var r Resizer
			if err := r.RGB(dst, c.dw, c.dh, src, c.sw, c.sh, m); err != nil {
				t.Fatal(err)
			}
			if want := m == Torch; r.horiz.hv.avx512() != want {
				t.Errorf("%v %v (%d taps): AVX-512 horizontal kernel used %v, want %v", c, m, r.horiz.w.taps, r.horiz.hv.avx512(), want)
			}
			if d := resizeBoth(t, src, c.sw, c.sh, c.dw, c.dh, m); d >= 0 {
				t.Fatalf("%v %v: byte %d differs between the vector and Go kernels", c, m, d)
			}
		}
	}
}

// TestHorizontalVectorShortRow: given rows without the padding the kernels' loads and stores need,
// horizontalVector falls back to the Go kernel rather than reach past them, and writes its bytes.
func TestHorizontalVectorShortRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	for _, c := range [][2]int{{1280, 1288}, {3840, 3836}} {
		var w weights
		w.compute(c[0], c[1], Torch, nil)
		in := testImage(rng, c[0], 1)
		want := make([]uint8, c[1]*3)
		horizontal(want, append(in[:len(in):len(in)], make([]uint8, rowPad)...), &w)
		for _, wide := range []bool{true, false} {
			var v hvec
			if !v.build(&w, wide) {
				t.Skip("no vector kernels on this CPU")
			}
			for _, pad := range [][2]int{{0, rowPad}, {rowPad, 0}} { // short input, short output
				got := make([]uint8, c[1]*3+pad[1])
				horizontalVector(got, append(in[:len(in):len(in)], make([]uint8, pad[0])...), &w, &v)
				if d := firstDiff(got[:len(want)], want); d >= 0 {
					t.Fatalf("%v wide %v pads %v: byte %d differs from the Go kernel's", c, wide, pad, d)
				}
			}
		}
	}
}
