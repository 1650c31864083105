//go:build !purego

package b64enc

import (
	"encoding/base64"

	"golang.org/x/sys/cpu"
)

// haveVBMI is whether this CPU and OS run the kernel: VPERMB and
// VPMULTISHIFTQB (VBMI) on 512-bit registers, byte masks (BW) for its last
// blocks, which BZHI (BMI2) makes.
var haveVBMI = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VBMI && cpu.X86.HasBMI2

// vbmiKernel is the kernel's constant vectors.
type vbmiKernel struct {
	// gather puts the group of three bytes a, b, c that output lane i
	// encodes as b a c b into the lane's four bytes.
	gather   [64]byte
	alphabet [64]byte
}

// vbmi is built once and only read: the kernel takes its vectors from Go
// rather than from assembler DATA tables so the table is written as the
// rule it follows.
var vbmi = func() *vbmiKernel {
	k := new(vbmiKernel)
	for i := range 16 {
		copy(k.gather[4*i:], []byte{byte(3*i + 1), byte(3 * i), byte(3*i + 2), byte(3*i + 1)})
	}
	copy(k.alphabet[:], "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
	return k
}()

// encodeBlocksVBMI encodes n bytes (a positive multiple of three) from src
// into n/3*4 bytes at dst, in AVX-512 VBMI (b64enc_amd64.s).
//
//go:noescape
func encodeBlocksVBMI(k *vbmiKernel, dst, src *byte, n int)

// encodeVBMI is Encode by the VBMI kernel; the CPU must have it.
func encodeVBMI(dst, src []byte) {
	whole := len(src) / 3 * 3
	if whole > 0 {
		_ = dst[whole/3*4-1]
		encodeBlocksVBMI(vbmi, &dst[0], &src[0], whole)
	}
	if whole < len(src) {
		base64.StdEncoding.Encode(dst[whole/3*4:], src[whole:])
	}
}
