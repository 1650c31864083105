package vision

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// levelKernel is what the patch kernels read: eight lanes of each channel's constants (patchAVX512
// broadcasts the first). patchAVX2 computes eight values at a time and rounds them to bfloat16 as
// bf16Bits does; patchAVX512 computes sixteen and rounds them with VCVTNEPS2BF16, nearest even too
// but (as Intel documents it) with denormals flushed to zero and NaN payloads kept, where bf16Bits
// rounds denormals and writes one NaN, so each instruction set is proven on its own. Both compute
// each value in one of two ways: the backends' own IEEE operations (float32(float64(l)·scale) −
// mean) / std, or — when it rounds to the same bfloat16 values — the cheaper float32(l)·mul + add.
// Each value depends only on its level and channel, so running the kernel once over all 3x256 of
// them and finding the table's bits (newLevelKernel does) proves it for every image.
type levelKernel struct {
	a, b   [3][8]float32 // offsets 0 and 96: mean and std, or mul and add
	scale  [4]float64    // offset 192
	affine bool
	avx512 bool // run by patchAVX512, else patchAVX2
	// from is the arithmetic the kernel was built for, so that tests can prove and run the same
	// arithmetic on every instruction set the CPU has.
	from levelAffine
}

// The instruction sets a kernel may run on, read once. patchAVX512 needs VBMI's VPERMB to pick a
// channel, BF16's rounding, and BMI2's BZHI for its tail masks.
var (
	hasAVX2   = cpu.X86.HasAVX2
	hasAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL &&
		cpu.X86.HasAVX512VBMI && cpu.X86.HasAVX512BF16 && cpu.X86.HasBMI2
)

// patchRowMin is the narrowest patch the kernels are given: patchAVX2 covers a row by eight-pixel
// steps, the last one moved back to overlap the one before (rewriting the same values). patchAVX512
// masks its last step and would take any width.
const patchRowMin = 8

//go:noescape
func streamAVX2(dst, src *byte, n int)

//go:noescape
func patchAVX2(out *byte, channel int, src *uint8, stride, width, rows, frame int, k *levelKernel, affine bool, across, down, wins, step int)

//go:noescape
func patchAVX512(out *byte, channel int, src *uint8, stride, width, rows, frame int, k *levelKernel, affine bool, across, down, wins, step int)

// newLevelKernel returns the vector kernel for a's arithmetic if it writes exactly the bits of t, or
// nil: without AVX2, for dtypes other than bfloat16, or for arithmetic the kernel cannot say. The
// AVX-512 kernel is preferred where the CPU has it and it is proven.
func newLevelKernel(a levelAffine, t *[3]levelTable, d DType) *levelKernel {
	if d != BFloat16 || !a.ok {
		return nil
	}
	if hasAVX512 {
		if k := provenKernel(a, t, true); k != nil {
			return k
		}
	}
	if hasAVX2 {
		return provenKernel(a, t, false)
	}
	return nil
}

// provenKernel returns a's kernel for the instruction set avx512 picks that writes exactly the bits of
// t, the affine shortcut before the exact arithmetic, or nil.
func provenKernel(a levelAffine, t *[3]levelTable, avx512 bool) *levelKernel {
	affine, exact := levelKernels(a, avx512)
	if affine.writes(t) {
		return affine
	}
	if exact.writes(t) {
		return exact
	}
	return nil
}

// levelKernels returns a's kernels, the affine shortcut and the exact arithmetic, unproven.
func levelKernels(a levelAffine, avx512 bool) (affine, exact *levelKernel) {
	affine, exact = &levelKernel{affine: true, avx512: avx512, from: a}, &levelKernel{avx512: avx512, from: a}
	for c := range 3 {
		mul := float32(a.scale / float64(a.std[c]))
		add := float32(-float64(a.mean[c]) / float64(a.std[c]))
		for i := range 8 {
			affine.a[c][i], affine.b[c][i] = mul, add
			exact.a[c][i], exact.b[c][i] = a.mean[c], a.std[c]
		}
	}
	for i := range exact.scale {
		exact.scale[i] = a.scale
	}
	return affine, exact
}

// writes reports whether k computes exactly the bits of t, level by level.
func (k *levelKernel) writes(t *[3]levelTable) bool {
	// Every level in every channel: pixel l is (l, l, l); channel c's row lands at out[c*512:].
	var src [256 * 3]uint8
	for l := range 256 {
		src[l*3], src[l*3+1], src[l*3+2] = uint8(l), uint8(l), uint8(l)
	}
	var out [3 * 512]byte
	k.run(&out[0], 512, &src[0], len(src), 256, 1, 0)
	for c := range 3 {
		for l := range 256 {
			if uint32(out[c*512+2*l])|uint32(out[c*512+2*l+1])<<8 != t[c][l] {
				return false
			}
		}
	}
	return true
}

// patchWindows writes the first frame of the patches of wins merge windows side by side (M x M
// patches of P x P pixels each, patchify's order) through k, whose bits are levels': src holds their
// rows (stride bytes apart, from the first window's top left pixel to the last's bottom right), out
// their patches, 3·channel bytes each, a patch's channel c at c·channel. With frame > 0 the kernel also
// writes each value frame bytes on (the second temporal frame, at no extra pass), and patchWindows
// reports true. One kernel call for them all: a call a patch cost about as much as a patch's rows.
func patchWindows(out []byte, channel, frame int, src []uint8, stride, P, M, wins int, levels *[3]levelTable, k *levelKernel) bool {
	n := wins * M * M
	if P < patchRowMin || M < 1 || wins < 1 || len(out) < (n-1)*3*channel+2*channel+2*P*P+frame || len(src) < (M*P-1)*stride+wins*M*3*P {
		// patchify never calls it so; the kernel must not overrun.
		lookupWindows(out, channel, src, stride, P, M, wins, levels, 2)
		return false
	}
	k.runPatches(&out[0], channel, &src[0], stride, P, P, frame, M, M, wins, 3*channel)
	return frame > 0
}

// run is k's kernel on rows rows of width pixels.
func (k *levelKernel) run(out *byte, channel int, src *uint8, stride, width, rows, frame int) {
	k.runPatches(out, channel, src, stride, width, rows, frame, 1, 1, 1, 0)
}

// runPatches is k's kernel on wins windows of down x across patches of rows rows of width pixels,
// step bytes apart in out.
func (k *levelKernel) runPatches(out *byte, channel int, src *uint8, stride, width, rows, frame, across, down, wins, step int) {
	if k.avx512 {
		patchAVX512(out, channel, src, stride, width, rows, frame, k, k.affine, across, down, wins, step)
		return
	}
	patchAVX2(out, channel, src, stride, width, rows, frame, k, k.affine, across, down, wins, step)
}

// streamOut copies a built patch to dst with non-temporal stores where dst is 16-byte aligned and the
// patch a multiple of 16 bytes (bfloat16 patches of even size are), else with copy.
func streamOut(dst, src []byte) {
	if len(dst) == 0 || len(dst) != len(src) || len(dst)%16 != 0 || uintptr(unsafe.Pointer(&dst[0]))%16 != 0 {
		copy(dst, src)
		return
	}
	streamAVX2(&dst[0], &src[0], len(dst))
}
