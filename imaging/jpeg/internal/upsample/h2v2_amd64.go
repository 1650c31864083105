//go:build !purego

package upsample

import "golang.org/x/sys/cpu"

// h2v2SumsAVX2 writes n column sums (n a positive multiple of 16) to sums.
//
//go:noescape
func h2v2SumsAVX2(sums *int16, near, far *byte, n int)

// h2v2FilterAVX2 writes 2n output samples (n a positive multiple of 16) from the padded sums
// (sums[0] the left neighbour of column 0).
//
//go:noescape
func h2v2FilterAVX2(out *byte, sums *int16, n int)

var haveAVX2 = cpu.X86.HasAVX2

// h2v2Sums fills the leading whole groups of 16 column sums and returns how many it filled.
func h2v2Sums(sums []int16, near, far []byte) int {
	n := len(near) &^ 15
	if !haveAVX2 || n == 0 {
		return 0
	}
	_, _ = sums[n-1], far[n-1]
	h2v2SumsAVX2(&sums[0], &near[0], &far[0], n)
	return n
}

// h2v2Filter writes the output of the leading whole groups of 16 columns and returns how many.
func h2v2Filter(out []byte, sums []int16) int {
	n := (len(sums) - 2) &^ 15
	if !haveAVX2 || n == 0 {
		return 0
	}
	_, _ = out[2*n-1], sums[n+1]
	h2v2FilterAVX2(&out[0], &sums[0], n)
	return n
}
