//go:build !purego

package ycc

import "golang.org/x/sys/cpu"

// toRGBAVX2 is toRGBGo in AVX2 assembly (ycc_amd64.s) for n pixels, n a positive multiple of 8.
//
//go:noescape
func toRGBAVX2(out, ys, cbs, crs *byte, n int)

var haveAVX2 = cpu.X86.HasAVX2

// toRGBAsm converts the leading whole groups of eight pixels and returns how many it converted.
func toRGBAsm(out, ys, cbs, crs []byte) int {
	n := len(ys) &^ 7
	if !haveAVX2 || n == 0 {
		return 0
	}
	_, _, _ = out[3*n-1], cbs[n-1], crs[n-1]
	toRGBAVX2(&out[0], &ys[0], &cbs[0], &crs[0], n)
	return n
}
