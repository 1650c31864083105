//go:build !purego

#include "textflag.h"

// encodeBlocksVBMI is Muła and Lemire's AVX-512 VBMI encoder ("Base64
// encoding and decoding at almost the speed of a memory copy", 2019): per
// 48 input bytes, one VPERMB gathers each group of three bytes a, b, c into
// a 32-bit lane as b a c b, one VPMULTISHIFTQB picks each output's six bits
// out of its lane (shifts 10, 4, 22, 16 in the lane), and one VPERMB looks
// the 64 values up in the alphabet (it reads only the low six bits of an
// index, so no mask is needed).
//
// The full blocks load 64 bytes for the 48 they use, so they run while 16
// more bytes follow; the last (up to 63) bytes go through byte-masked loads
// and stores, which do not touch memory past the buffers.

// func encodeBlocksVBMI(k *vbmiKernel, dst, src *byte, n int)
TEXT ·encodeBlocksVBMI(SB), NOSPLIT, $0-32
	MOVQ      k+0(FP), AX
	VMOVDQU64 (AX), Z0   // gather
	VMOVDQU64 64(AX), Z2 // alphabet

	// The bit offsets of the four outputs in each of a quadword's two lanes.
	MOVQ         $0x3036242a1016040a, BX
	VPBROADCASTQ BX, Z1
	MOVQ         dst+8(FP), DI
	MOVQ         src+16(FP), SI
	MOVQ         n+24(FP), R8

loop4:
	CMPQ R8, $208
	JB   loop1
	VPERMB         (SI), Z0, Z4
	VPERMB         48(SI), Z0, Z5
	VPERMB         96(SI), Z0, Z6
	VPERMB         144(SI), Z0, Z7
	VPMULTISHIFTQB Z4, Z1, Z4
	VPMULTISHIFTQB Z5, Z1, Z5
	VPMULTISHIFTQB Z6, Z1, Z6
	VPMULTISHIFTQB Z7, Z1, Z7
	VPERMB         Z2, Z4, Z4
	VPERMB         Z2, Z5, Z5
	VPERMB         Z2, Z6, Z6
	VPERMB         Z2, Z7, Z7
	VMOVDQU64      Z4, (DI)
	VMOVDQU64      Z5, 64(DI)
	VMOVDQU64      Z6, 128(DI)
	VMOVDQU64      Z7, 192(DI)
	ADDQ           $192, SI
	ADDQ           $256, DI
	SUBQ           $192, R8
	JMP            loop4

loop1:
	CMPQ           R8, $64
	JB             tail
	VPERMB         (SI), Z0, Z4
	VPMULTISHIFTQB Z4, Z1, Z4
	VPERMB         Z2, Z4, Z4
	VMOVDQU64      Z4, (DI)
	ADDQ           $48, SI
	ADDQ           $64, DI
	SUBQ           $48, R8
	JMP            loop1

tail:
	// R8 < 64 bytes left, a multiple of three: one or two masked blocks of
	// AX = min(R8, 48) bytes in, DX = AX/3*4 out (AX*171>>9 is AX/3 for
	// these AX).
	TESTQ   R8, R8
	JZ      done
	MOVQ    R8, AX
	MOVQ    $48, BX
	CMPQ    AX, BX
	CMOVQGT BX, AX
	IMUL3Q  $171, AX, DX
	SHRQ    $9, DX
	SHLQ    $2, DX
	MOVQ    $-1, BX
	BZHIQ   AX, BX, CX
	KMOVQ   CX, K1
	BZHIQ   DX, BX, CX
	KMOVQ   CX, K2
	VMOVDQU8.Z     (SI), K1, Z4
	VPERMB         Z4, Z0, Z4
	VPMULTISHIFTQB Z4, Z1, Z4
	VPERMB         Z2, Z4, Z4
	VMOVDQU8       Z4, K2, (DI)
	ADDQ           AX, SI
	ADDQ           DX, DI
	SUBQ           AX, R8
	JMP            tail

done:
	VZEROUPPER
	RET
