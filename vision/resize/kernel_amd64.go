package resize

import (
	"encoding/binary"
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
//
// The AVX-512 kernels (kernel512_amd64.s) take torch's int16 weights only. Vertical: sixty-four bytes
// a step, two rows' bytes gathered into int16 pairs by VPERMI2B, one VPDPWSSD a pair of rows and
// sixteen bytes. Horizontal, for spans of at most six taps (enlargements and mild reductions):
// sixteen output pixels a step from one load of 64 bytes (four taps) or 128 (six), VPERMB
// (VPERMI2B) gathering each output byte's tap pairs from it by indexes built per group.

var hasAVX2 = cpu.X86.HasAVX2

// hasAVX512 is what the AVX-512 kernels (kernel512_amd64.s) need: byte and word instructions,
// VBMI's byte permutes and VNNI's VPDPWSSD, which multiplies int16 pairs and accumulates in one.
var hasAVX512 = hasAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VBMI && cpu.X86.HasAVX512VNNI

//go:noescape
func hconvAVX2(out, in *uint8, start *int32, wh, wl *int16, pairs, groups int, half int32, prec uint)

//go:noescape
func vconvAVX2(out *uint8, rows **uint8, k *int32, taps, n int, half int32, prec uint)

//go:noescape
func vmaddAVX2(out *uint8, rows **uint8, k *int32, pairs, n int, half int32, prec uint)

//go:noescape
func hconv5AVX2(out, in *uint8, start *int32, wh, wl *int16, quads int, half int32, prec uint)

//go:noescape
func vmaddAVX512(out *uint8, rows **uint8, k *int32, pairs, n int, half int32, prec uint)

//go:noescape
func hconvAVX512(out, in *uint8, tab *uint8, groups int, tail uint64, half int32, prec uint, pairs int)

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

	// For hconvAVX512: its tables (tab, 64-byte aligned within ztab), with groups of sixteen output
	// pixels.
	wide, zmm bool // wide: built with the AVX-512 kernel allowed; zmm: it runs
	ztab, tab []uint8
	zgroups   int
	zpairs    int // tap pairs: 2 for spans of up to four taps, 3 for six
	zread     int // the bytes of the source row the loads reach
}

// pillowSplit is the bit position at which Pillow's weights are split for VPMADDWD.
const pillowSplit = 11

// build fills v from w, or reports false when the vector kernel is unavailable. wide allows the
// AVX-512 kernel, which runs where the CPU has it and w fits it.
func (v *hvec) build(w *weights, wide bool) bool {
	if !hasAVX2 {
		return false
	}
	wide = wide && hasAVX512
	if v.key == w.key && v.wide == wide {
		return true
	}
	v.key = weightsKey{}
	v.wide = wide
	v.zmm = wide && v.build512(w)
	if v.zmm {
		v.key = w.key
		return true
	}
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
	half := int32(1) << (w.prec - 1)
	if v.zmm {
		if len(in) < v.zread || len(out) < n*3+16 {
			horizontal(out[:n*3], in, w) // RGB pads both; the kernel must never read or write past them
			return
		}
		tail := uint64(1)<<(n*3-48*(v.zgroups-1)) - 1
		hconvAVX512(&out[0], &in[0], &v.tab[0], v.zgroups, tail, half, w.prec, v.zpairs)
		return
	}
	if len(out) < len(v.start)*3+4 || len(in) < (int(w.start[n-1])+4*v.groups)*3+4 {
		horizontal(out[:n*3], in, w)
		return
	}
	var lo *int16
	if v.split {
		lo = &v.lo[0]
	}
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

// verticalVector writes out, 32 bytes a step (64 with the AVX-512 kernel, which wide allows), the last
// step overlapping the one before, and returns len(out); or returns 0, writing nothing, for rows
// shorter than a step or without AVX2.
func verticalVector(out []uint8, rows [][]uint8, k []int32, prec uint, wide bool) int {
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
	if wide && hasAVX512 && n >= 64 {
		vmaddAVX512(&out[0], &ptrs[0], &pairs[0], (len(rows)+1)/2, n, half, prec)
		return n
	}
	vmaddAVX2(&out[0], &ptrs[0], &pairs[0], (len(rows)+1)/2, n, half, prec)
	return n
}

// maxVectorTaps bounds the vertical kernel's row-pointer array on the stack: a 64-tap filter is a
// reduction by 15x, beyond it the Go kernel runs.
const maxVectorTaps = 64

// The AVX-512 horizontal kernel's tables, in 64-byte vectors, for zpairs tap pairs (2 or 3): a
// header of 3+3·zpairs constants (per sum vector a, the spread index at a, and the add vectors of
// its pairs p at 3+a·zpairs+p), then a group of zgroup output pixels in 3·zpairs+1 vectors — the
// weights of sum vector a's pair p at a·zpairs+p (the pair's int16 weights for each dword's pixel),
// then the pixels' span offsets from the group's load (sixteen bytes) and the load's offset in the
// row (an int32).
const zgroup = 16

// bytes is about how much memory v's tables hold.
func (v *hvec) bytes() int { return 4*cap(v.start) + 2*(cap(v.hi)+cap(v.lo)) + cap(v.ztab) }

// avx512 reports whether the AVX-512 horizontal kernel runs for the weights v was last built from.
func (v *hvec) avx512() bool { return v.zmm }

// zbyte is the output byte within its group that dword i of sum vector a becomes after the in-lane
// packs and the compaction.
func zbyte(a, i int) int { return 12*(i/4) + 4*a + i%4 }

// build512 fills v's tables for the AVX-512 horizontal kernels, or reports false when w does not fit
// them: Pillow's 22-bit weights (which VPDPWSSD cannot take whole), more than six taps, or a group
// whose spans do not lie within one load (64 bytes for four taps, 128 for six) inside the padded row.
func (v *hvec) build512(w *weights) bool {
	n := len(w.start)
	if w.prec > 15 || w.taps > 6 {
		return false
	}
	pairs, window := 2, 64
	if w.taps > 4 {
		pairs, window = 3, 128
	}
	groups := (n + zgroup - 1) / zgroup
	rowBytes := w.key.in*3 + rowPad
	// A group's load starts at its first span, or earlier where that would read past the row's
	// padding (the last, short group's).
	base := func(g int) int { return min(int(w.start[g*zgroup])*3, rowBytes-window) }
	for g := range groups {
		// The last pixel's last tap pair's second byte must be in the load.
		hi := int(w.start[min(g*zgroup+zgroup, n)-1])
		if b := base(g); b < 0 || (hi+2*pairs-1)*3+2-b >= window {
			return false
		}
	}
	head, stride := 3+3*pairs, 3*pairs+1
	size := (head + groups*stride) * 64
	v.ztab = grow(v.ztab, size+63)
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(v.ztab))) & 63)
	v.tab = v.ztab[off : off+size]
	clear(v.tab)
	v.zgroups, v.zpairs = groups, pairs
	v.zread = 0
	// The header: per sum vector a, the VPERMB index that spreads a group's sixteen span offsets to
	// its dwords' bytes 0 and 2, then the bytes added to them for tap pair p: the channel, 6p, and 3
	// more for the pair's second tap.
	for a := range 3 {
		spread := v.tab[a*64:][:64]
		for p := range pairs {
			add := v.tab[(3+a*pairs+p)*64:][:64]
			for i := range 16 {
				b := zbyte(a, i)
				spread[4*i], spread[4*i+2] = uint8(b/3), uint8(b/3)
				add[4*i], add[4*i+2] = uint8(b%3+6*p), uint8(b%3+6*p+3)
			}
		}
	}
	for g := range groups {
		x0 := g * zgroup
		b0 := base(g)
		v.zread = max(v.zread, b0+window)
		grp := v.tab[(head+g*stride)*64:][:stride*64]
		offs := grp[3*pairs*64:]
		for j := range zgroup {
			if x := x0 + j; x < n {
				offs[j] = uint8(int(w.start[x])*3 - b0)
			}
		}
		binary.LittleEndian.PutUint32(offs[zgroup:], uint32(b0))
		for a := range 3 { // sum vector
			for i := range 16 {
				x := x0 + zbyte(a, i)/3
				if x >= n {
					continue // zero weights for the padding
				}
				var k [6]int32
				copy(k[:w.taps], w.k[x*w.ksize:])
				for p := range pairs {
					pair := uint32(uint16(k[2*p])) | uint32(uint16(k[2*p+1]))<<16
					binary.LittleEndian.PutUint32(grp[(a*pairs+p)*64+4*i:], pair)
				}
			}
		}
	}
	return true
}
