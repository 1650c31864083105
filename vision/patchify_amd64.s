#include "textflag.h"

// Shuffles that pick one channel of eight RGB pixels: for channel c, from the first sixteen bytes
// (deint+32c) and from the next eight (deint+32c+16).
DATA deint<>+0(SB)/8, $0x80800f0c09060300
DATA deint<>+8(SB)/8, $0x8080808080808080
DATA deint<>+16(SB)/8, $0x0502808080808080
DATA deint<>+24(SB)/8, $0x8080808080808080
DATA deint<>+32(SB)/8, $0x8080800d0a070401
DATA deint<>+40(SB)/8, $0x8080808080808080
DATA deint<>+48(SB)/8, $0x0603008080808080
DATA deint<>+56(SB)/8, $0x8080808080808080
DATA deint<>+64(SB)/8, $0x8080800e0b080502
DATA deint<>+72(SB)/8, $0x8080808080808080
DATA deint<>+80(SB)/8, $0x0704018080808080
DATA deint<>+88(SB)/8, $0x8080808080808080
GLOBL deint<>(SB), RODATA|NOPTR, $96

// CHANNEL looks up eight pixels' channel (shuffles m0, m1 of the bytes in X0, X1) in the table at
// lut and stores the eight 16-bit values at out.
#define CHANNEL(m0, m1, lut, out) \
	VPSHUFB m0, X0, X2              \
	VPSHUFB m1, X1, X3              \
	VPOR X3, X2, X2                 \
	VPMOVZXBD X2, Y2                \
	VPCMPEQD Y4, Y4, Y4             \
	VPGATHERDD Y4, (lut)(Y2*4), Y5  \
	VPACKUSDW Y5, Y5, Y5            \
	VPERMQ $0x08, Y5, Y5            \
	VMOVDQU X5, out

// func patchRowAVX2(out *byte, channel int, src *uint8, n int, levels *uint32)
TEXT ·patchRowAVX2(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ channel+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ n+24(FP), CX
	MOVQ levels+32(FP), R9
	LEAQ (DI)(R8*1), R12 // channel 1's row
	LEAQ (R12)(R8*1), R13 // channel 2's row
	LEAQ 1024(R9), R10 // channel 1's table
	LEAQ 2048(R9), R11 // channel 2's table
	VMOVDQU deint<>+0(SB), X10
	VMOVDQU deint<>+16(SB), X11
	VMOVDQU deint<>+32(SB), X12
	VMOVDQU deint<>+48(SB), X13
	VMOVDQU deint<>+64(SB), X14
	VMOVDQU deint<>+80(SB), X15
	MOVQ CX, DX
	SUBQ $8, DX // the last chunk's first pixel: chunks past it are moved back to overlap
	XORQ BX, BX

chunk:
	CMPQ BX, DX
	CMOVQGT DX, BX
	LEAQ (BX)(BX*2), AX
	VMOVDQU (SI)(AX*1), X0
	VMOVQ 16(SI)(AX*1), X1
	CHANNEL(X10, X11, R9, (DI)(BX*2))
	CHANNEL(X12, X13, R10, (R12)(BX*2))
	CHANNEL(X14, X15, R11, (R13)(BX*2))
	ADDQ $8, BX
	CMPQ BX, CX
	JLT  chunk

	VZEROUPPER
	RET
