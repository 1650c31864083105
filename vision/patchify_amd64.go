package vision

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// levelKernel is what patchRowAVX2 reads: eight lanes of each channel's constants. The kernel
// computes eight values at a time and rounds them to bfloat16 as bf16Bits does, in one of two ways:
// the backends' own IEEE operations (float32(float64(l)·scale) − mean) / std, or — when it rounds to
// the same bfloat16 values — the cheaper float32(l)·mul + add. Each value depends only on its level
// and channel, so running the kernel once over all 3x256 of them and finding the table's bits
// (newLevelKernel does) proves it for every image.
type levelKernel struct {
	a, b   [3][8]float32 // offsets 0 and 96: mean and std, or mul and add
	scale  [4]float64    // offset 192
	affine bool
}

// patchRowMin is the narrowest patch the kernel handles: a row is covered by eight-pixel steps, the last
// one moved back to overlap the one before (rewriting the same values).
const patchRowMin = 8

//go:noescape
func streamAVX2(dst, src *byte, n int)

//go:noescape
func patchAVX2(out *byte, channel int, src *uint8, stride, width, rows, frame int, k *levelKernel, affine bool)

// newLevelKernel returns the vector kernel for a's arithmetic if it writes exactly the bits of t, or
// nil: without AVX2, for dtypes other than bfloat16, or for arithmetic the kernel cannot say.
func newLevelKernel(a levelAffine, t *[3]levelTable, d DType) *levelKernel {
	if !cpu.X86.HasAVX2 || d != BFloat16 || !a.ok {
		return nil
	}
	affine, exact := levelKernels(a)
	if affine.writes(t) {
		return affine
	}
	if exact.writes(t) {
		return exact
	}
	return nil
}

// levelKernels returns a's kernels, the affine shortcut and the exact arithmetic, unproven.
func levelKernels(a levelAffine) (affine, exact *levelKernel) {
	affine, exact = &levelKernel{affine: true}, new(levelKernel)
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
	patchAVX2(&out[0], 512, &src[0], len(src), 256, 1, 0, k, k.affine)
	for c := range 3 {
		for l := range 256 {
			if uint32(out[c*512+2*l])|uint32(out[c*512+2*l+1])<<8 != t[c][l] {
				return false
			}
		}
	}
	return true
}

// patchBlock writes the first frame of one P x P patch through k, whose bits are levels': src holds
// its P rows (stride bytes apart, the last one 3P long), out its three channels, channel bytes apart.
// With frame > 0 the kernel also writes each value frame bytes on (the second temporal frame, at
// no extra pass), and patchBlock reports true.
func patchBlock(out []byte, channel, frame int, src []uint8, stride, P int, levels *[3]levelTable, k *levelKernel) bool {
	if P < patchRowMin || len(out) < 2*channel+2*P*P+frame || len(src) < (P-1)*stride+3*P {
		// patchify never calls it so; the kernel must not overrun.
		for py := range P {
			lookupRow(out[2*py*P:], channel, src[py*stride:py*stride+3*P], levels, 2)
		}
		return false
	}
	patchAVX2(&out[0], channel, &src[0], stride, P, P, frame, k, k.affine)
	return frame > 0
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
