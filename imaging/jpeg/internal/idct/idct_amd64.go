//go:build !purego

package idct

import "golang.org/x/sys/cpu"

// islowAVX2 is islowGo in AVX2 assembly (idct_amd64.s), identical output for every input; dst must
// have 7*stride+8 bytes.
//
//go:noescape
func islowAVX2(b, q *Block, dst *byte, stride int)

var haveAVX2 = cpu.X86.HasAVX2

func islow(b, q *Block, dst []byte, stride int) {
	if haveAVX2 {
		islowAVX2(b, q, &dst[0], stride)
		return
	}
	islowGo(b, q, dst, stride)
}
