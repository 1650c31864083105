package vision

import "golang.org/x/sys/cpu"

// levelKernel is what patchRowAVX2 reads: a levelAffine broadcast to eight lanes. The kernel
// converts, multiplies, subtracts and divides eight values at a time with the IEEE operations the
// tables were computed with, then rounds to bfloat16 as bf16Bits does. Each value depends only on its
// level and channel, so running the kernel once over all 3x256 of them and finding the table's bits
// (newLevelKernel does) proves it for every image.
type levelKernel struct {
	mean  [3][8]float32 // offset 0
	std   [3][8]float32 // offset 96
	scale [4]float64    // offset 192
}

// patchRowMin is the narrowest patch patchRow handles: a row is covered by eight-pixel steps, the last
// one moved back to overlap the one before (rewriting the same values).
const patchRowMin = 8

//go:noescape
func patchRowAVX2(out *byte, channel int, src *uint8, n int, k *levelKernel)

// newLevelKernel returns the vector kernel for a's arithmetic if it writes exactly the bits of t, or
// nil: without AVX2, for dtypes other than bfloat16, or for arithmetic the kernel cannot say.
func newLevelKernel(a levelAffine, t *[3]levelTable, d DType) *levelKernel {
	if !cpu.X86.HasAVX2 || d != BFloat16 || !a.ok {
		return nil
	}
	k := new(levelKernel)
	for c := range 3 {
		for i := range 8 {
			k.mean[c][i], k.std[c][i] = a.mean[c], a.std[c]
		}
	}
	for i := range k.scale {
		k.scale[i] = a.scale
	}
	// Every level in every channel: pixel l is (l, l, l); channel c's row lands at out[c*512:].
	var src [256 * 3]uint8
	for l := range 256 {
		src[l*3], src[l*3+1], src[l*3+2] = uint8(l), uint8(l), uint8(l)
	}
	var out [3 * 512]byte
	patchRowAVX2(&out[0], 512, &src[0], 256, k)
	for c := range 3 {
		for l := range 256 {
			if uint32(out[c*512+2*l])|uint32(out[c*512+2*l+1])<<8 != t[c][l] {
				return nil
			}
		}
	}
	return k
}

// patchRow is lookupRow for bfloat16 through k, whose bits are levels'.
func patchRow(out []byte, channel int, src []uint8, levels *[3]levelTable, k *levelKernel) {
	n := len(src) / 3
	if n < patchRowMin || len(out) < 2*channel+2*n {
		lookupRow(out, channel, src, levels, 2) // patchify never calls it so; the kernel must not overrun
		return
	}
	patchRowAVX2(&out[0], channel, &src[0], n, k)
}
