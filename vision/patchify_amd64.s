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

DATA bf16Round<>+0(SB)/4, $1
DATA bf16Round<>+4(SB)/4, $0x7fff
GLOBL bf16Round<>(SB), RODATA|NOPTR, $8

// CHANNEL computes eight pixels' channel (shuffles m0, m1 of the bytes in X0, X1):
// (float32(float64(l)·scale) − mean) / std, rounded to bfloat16, stored at out. Y9 holds the scale,
// Y8 ones and Y5 0x7fff for the rounding.
#define CHANNEL(m0, m1, mean, std, out) \
	VPSHUFB m0, X0, X2           \
	VPSHUFB m1, X1, X3           \
	VPOR X3, X2, X2              \
	VPMOVZXBD X2, Y2             \
	VCVTDQ2PD X2, Y6             \
	VEXTRACTI128 $1, Y2, X7      \
	VCVTDQ2PD X7, Y7             \
	VMULPD Y9, Y6, Y6            \
	VMULPD Y9, Y7, Y7            \
	VCVTPD2PSY Y6, X6            \
	VCVTPD2PSY Y7, X7            \
	VINSERTF128 $1, X7, Y6, Y6   \
	VSUBPS mean, Y6, Y6          \
	VDIVPS std, Y6, Y6           \
	VPSRLD $16, Y6, Y7           \
	VPAND Y8, Y7, Y7             \
	VPADDD Y7, Y6, Y6            \
	VPADDD Y5, Y6, Y6            \
	VPSRLD $16, Y6, Y6           \
	VPACKUSDW Y6, Y6, Y6         \
	VPERMQ $0x08, Y6, Y6         \
	VMOVDQU X6, out

// func patchRowAVX2(out *byte, channel int, src *uint8, n int, k *levelKernel)
TEXT ·patchRowAVX2(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ channel+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ n+24(FP), CX
	MOVQ k+32(FP), R9
	LEAQ (DI)(R8*1), R12 // channel 1's row
	LEAQ (R12)(R8*1), R13 // channel 2's row
	VMOVUPD 192(R9), Y9
	VPBROADCASTD bf16Round<>+0(SB), Y8
	VPBROADCASTD bf16Round<>+4(SB), Y5
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
	CHANNEL(X10, X11, 0(R9), 96(R9), (DI)(BX*2))
	CHANNEL(X12, X13, 32(R9), 128(R9), (R12)(BX*2))
	CHANNEL(X14, X15, 64(R9), 160(R9), (R13)(BX*2))
	ADDQ $8, BX
	CMPQ BX, CX
	JLT  chunk

	VZEROUPPER
	RET
