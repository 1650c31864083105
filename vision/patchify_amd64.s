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

// PICK gathers eight pixels' channel (shuffles m0, m1 of the bytes in X0, X1) as int32 in Y2.
#define PICK(m0, m1) \
	VPSHUFB m0, X0, X2  \
	VPSHUFB m1, X1, X3  \
	VPOR X3, X2, X2     \
	VPMOVZXBD X2, Y2

// EXACT computes the backends' own arithmetic into Y6: (float32(float64(l)·scale) − a) / b, the scale
// in Y9.
#define EXACT(a, b) \
	VCVTDQ2PD X2, Y6             \
	VEXTRACTI128 $1, Y2, X7      \
	VCVTDQ2PD X7, Y7             \
	VMULPD Y9, Y6, Y6            \
	VMULPD Y9, Y7, Y7            \
	VCVTPD2PSY Y6, X6            \
	VCVTPD2PSY Y7, X7            \
	VINSERTF128 $1, X7, Y6, Y6   \
	VSUBPS a, Y6, Y6             \
	VDIVPS b, Y6, Y6

// AFFINE computes float32(l)·a + b into Y6 (two roundings, no FMA), where it is proven to round to
// the same bfloat16 values.
#define AFFINE(a, b) \
	VCVTDQ2PS Y2, Y6  \
	VMULPS a, Y6, Y6  \
	VADDPS b, Y6, Y6

// BF16 rounds Y6 to bfloat16 as bf16Bits does (Y8 ones, Y5 0x7fff) and stores the eight values at
// base + 2·BX, and again R8 bytes on (the next temporal frame; AX is free once the pixels are loaded).
// The 128-bit narrowing (extract, pack) costs fewer micro-ops than a 256-bit pack and VPERMQ on CPUs
// that split 256-bit operations.
#define BF16(base) \
	VPSRLD $16, Y6, Y7          \
	VPAND Y8, Y7, Y7            \
	VPADDD Y7, Y6, Y6           \
	VPADDD Y5, Y6, Y6           \
	VPSRLD $16, Y6, Y6          \
	VEXTRACTI128 $1, Y6, X7     \
	VPACKUSDW X7, X6, X6        \
	LEAQ (base)(BX*2), AX       \
	VMOVDQU X6, (AX)            \
	VMOVDQU X6, (AX)(R8*1)

// CHANNELS computes the three channels of the eight pixels in X0, X1 with op (AFFINE or EXACT) and
// stores them in the three channels' rows.
#define CHANNELS(op) \
	PICK(X10, X11)           \
	op(0(R9), 96(R9))        \
	BF16(DI)                 \
	PICK(X12, X13)           \
	op(32(R9), 128(R9))      \
	BF16(R12)                \
	PICK(X14, X15)           \
	op(64(R9), 160(R9))      \
	BF16(R13)

// func patchAVX2(out *byte, channel int, src *uint8, stride, width, rows, frame int, k *levelKernel, affine bool)
//
// rows rows of width pixels, src rows stride bytes apart; channel c's values of row r go to
// out + c·channel + r·2·width, and again frame bytes on.
TEXT ·patchAVX2(SB), NOSPLIT, $0-65
	MOVQ out+0(FP), DI
	MOVQ channel+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ width+32(FP), CX
	MOVQ k+56(FP), R9
	MOVBQZX affine+64(FP), R10
	MOVQ rows+40(FP), R11
	LEAQ (DI)(R8*1), R12 // channel 1's row
	LEAQ (R12)(R8*1), R13 // channel 2's row
	MOVQ frame+48(FP), R8
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
	TESTQ R11, R11
	JZ   done

row:
	PREFETCHT0 256(SI) // the patches to the right, three merge windows on: too many rows for the hardware prefetchers
	XORQ BX, BX

chunk:
	CMPQ BX, DX
	CMOVQGT DX, BX
	LEAQ (BX)(BX*2), AX
	VMOVDQU (SI)(AX*1), X0
	VMOVQ 16(SI)(AX*1), X1
	TESTQ R10, R10
	JZ   exact
	CHANNELS(AFFINE)
	JMP  next

exact:
	CHANNELS(EXACT)

next:
	ADDQ $8, BX
	CMPQ BX, CX
	JLT  chunk

	ADDQ stride+24(FP), SI
	LEAQ (DI)(CX*2), DI
	LEAQ (R12)(CX*2), R12
	LEAQ (R13)(CX*2), R13
	DECQ R11
	JNZ  row

done:
	VZEROUPPER
	RET

// func streamAVX2(dst, src *byte, n int)
//
// n bytes, a multiple of 16, to a 16-byte aligned dst with non-temporal stores; SFENCE orders them
// before whatever the caller does next.
TEXT ·streamAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX
	TESTQ CX, CX
	JZ   sdone

sstep:
	VMOVDQU (SI)(AX*1), X0
	VMOVNTDQ X0, (DI)(AX*1)
	ADDQ $16, AX
	CMPQ AX, CX
	JB   sstep

sdone:
	SFENCE
	RET
