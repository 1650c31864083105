package resize

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The AVX2 kernels (kernel_amd64.s) compute the Go kernels' integer sums eight or more at a time;
// integer sums do not depend on their order, and both sides round and clamp alike, so the bytes are
// the same (TestVectorMatchesGo, FuzzVectorMatchesGo).
//
// Vertical: thirty-two bytes a step. With int16 weights (torch's) two rows' bytes are widened to
// int16 and interleaved for one VPMADDWD; otherwise each byte is zero-extended to int32 and multiplied
// by its row's weight (VPMULLD). Horizontal: two output pixels at a time, one per 128-bit lane;
// sixteen bytes loaded from a pixel's span hold five input pixels, which a shuffle spreads into
// (red, red', green, green', blue, blue') int16 pairs of neighbouring taps for VPMADDWD. VPMADDWD
// multiplies int16 weights: torch's weights are int16 already; Pillow's 22-bit ones are split into
// hi·2^11 + lo, two multiply-adds whose int32 sums combine exactly (modulo 2^32, and the true sum fits
// an int32, as Pillow's C code relies on).

var hasAVX2 = cpu.X86.HasAVX2

//go:noescape
func hconvAVX2(out, in *uint8, start *int32, wh, wl *int16, pairs, groups int, half int32, prec uint)

//go:noescape
func vconvAVX2(out *uint8, rows **uint8, k *int32, taps, n int, half int32, prec uint)

//go:noescape
func vmaddAVX2(out *uint8, rows **uint8, k *int32, pairs, n int, half int32, prec uint)

//go:noescape
func hconv5AVX2(out, in *uint8, start *int32, wh, wl *int16, quads int, half int32, prec uint)

//go:noescape
func hconv4AVX2(out, in *uint8, start *int32, wh, wl *int16, quads int, half int32, prec uint)

// hvec holds the horizontal weights as the kernels read them: for each pair of output pixels, vecs
// 32-byte vectors, vector v holding taps 2v and 2v+1, pixel 2q in the low lane and 2q+1 in the high
// one, each lane the two weights repeated for red, green and blue. hconvAVX2 reads them as groups of
// four taps (vecs = 2·groups); hconv5AVX2, for spans of at most five taps, as three vectors (taps 0-1,
// 2-3, 4) and four pixels a step; hconv4AVX2, for at most four, as two. Missing last pixels are
// zero-weighted copies of the last one, which write into the row's padding.
type hvec struct {
	key    weightsKey // the weights the vectors were built from
	hi, lo []int16    // lo only for Pillow's split weights
	start  []int32
	groups int
	split  bool
}

// pillowSplit is the bit position at which Pillow's weights are split for VPMADDWD.
const pillowSplit = 11

// build fills v from w, or reports false when the vector kernel is unavailable.
func (v *hvec) build(w *weights) bool {
	if !hasAVX2 {
		return false
	}
	if v.key == w.key {
		return true
	}
	v.key = weightsKey{}
	n := len(w.start)
	v.groups = (w.taps + 3) / 4
	vecs, step := 2*v.groups, 2
	switch {
	case w.taps <= 4:
		vecs, step = 2, 4
	case w.taps <= 5:
		vecs, step = 3, 4
	}
	padded := (n + step - 1) / step * step
	v.split = w.prec > 15
	v.start = grow(v.start, padded)
	copy(v.start, w.start)
	for x := n; x < padded; x++ {
		v.start[x] = w.start[n-1]
	}
	size := padded / 2 * vecs * 16
	v.hi = grow(v.hi, size)
	if v.split {
		v.lo = grow(v.lo, size)
	}
	for x := range padded {
		for vec := range vecs {
			base := ((x/2)*vecs+vec)*16 + (x%2)*8
			for t := range 2 {
				j := 2*vec + t
				kv := int32(0)
				if x < n && j < w.taps {
					kv = w.k[x*w.ksize+j]
				}
				hi, lo := kv, int32(0)
				if v.split {
					hi, lo = kv>>pillowSplit, kv&(1<<pillowSplit-1)
				}
				for c := range 4 {
					if c == 3 {
						hi, lo = 0, 0
					}
					v.hi[base+2*c+t] = int16(hi)
					if v.split {
						v.lo[base+2*c+t] = int16(lo)
					}
				}
			}
		}
	}
	v.key = w.key
	return true
}

// horizontalVector resamples one padded source row into out, which has rowPad bytes of slack.
func horizontalVector(out []uint8, in []uint8, w *weights, v *hvec) {
	n := len(w.start)
	if len(out) < len(v.start)*3+4 || len(in) < (int(w.start[n-1])+4*v.groups)*3+4 {
		horizontal(out[:n*3], in, w) // RGB pads both; the kernel must never read or write past them
		return
	}
	var lo *int16
	if v.split {
		lo = &v.lo[0]
	}
	half := int32(1) << (w.prec - 1)
	switch {
	case w.taps <= 4:
		hconv4AVX2(&out[0], &in[0], &v.start[0], &v.hi[0], lo, len(v.start)/4, half, w.prec)
		return
	case w.taps <= 5:
		hconv5AVX2(&out[0], &in[0], &v.start[0], &v.hi[0], lo, len(v.start)/4, half, w.prec)
		return
	}
	hconvAVX2(&out[0], &in[0], &v.start[0], &v.hi[0], lo, len(v.start)/2, v.groups, half, w.prec)
}

// verticalVector writes out, 32 bytes a step, the last step overlapping the one before, and returns
// len(out); or returns 0, writing nothing, for rows shorter than a step or without AVX2.
func verticalVector(out []uint8, rows [][]uint8, k []int32, prec uint) int {
	n := len(out)
	if !hasAVX2 || n < 32 {
		return 0
	}
	var ptrs [maxVectorTaps + 1]*uint8
	if len(rows) > maxVectorTaps {
		return 0
	}
	for j, row := range rows {
		ptrs[j] = unsafe.SliceData(row[:n])
	}
	half := int32(1) << (prec - 1)
	// torch's int16 weights: one VPMADDWD a pair of rows, an odd last row paired with itself at
	// weight zero. Pillow's 22-bit ones: one VPMULLD a row.
	var pairs [(maxVectorTaps + 1) / 2]int32
	for j, kv := range k {
		if kv != int32(int16(kv)) {
			vconvAVX2(&out[0], &ptrs[0], &k[0], len(rows), n, half, prec)
			return n
		}
		pairs[j/2] |= int32(uint32(uint16(kv)) << (16 * (j % 2)))
	}
	ptrs[len(rows)] = ptrs[len(rows)-1]
	vmaddAVX2(&out[0], &ptrs[0], &pairs[0], (len(rows)+1)/2, n, half, prec)
	return n
}

// maxVectorTaps bounds the vertical kernel's row-pointer array on the stack: a 64-tap filter is a
// reduction by 15x, beyond it the Go kernel runs.
const maxVectorTaps = 64
