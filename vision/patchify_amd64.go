package vision

import "golang.org/x/sys/cpu"

// patchVector reports whether patchRow's AVX2 kernel runs: eight pixels of a channel a step, their
// levels gathered (VPGATHERDD) from the same level tables lookupRow reads, so the values are the
// tables' by construction (TestPatchRowMatchesLookup checks the plumbing).
var patchVector = cpu.X86.HasAVX2

// patchRowMin is the narrowest patch patchRow handles: a row is covered by eight-pixel steps, the last
// one moved back to overlap the one before (rewriting the same values).
const patchRowMin = 8

//go:noescape
func patchRowAVX2(out *byte, channel int, src *uint8, n int, levels *uint32)

// patchRow is lookupRow for 16-bit dtypes and rows of at least patchRowMin pixels.
func patchRow(out []byte, channel int, src []uint8, levels *[3]levelTable) {
	n := len(src) / 3
	if n < patchRowMin || len(out) < 2*channel+2*n {
		lookupRow(out, channel, src, levels, 2) // patchify never calls it so; the kernel must not overrun
		return
	}
	patchRowAVX2(&out[0], channel, &src[0], n, &levels[0][0])
}
