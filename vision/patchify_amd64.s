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

// VPERMB indices that pick channel c of sixteen RGB pixels (pick512+64c) into the low byte of each
// 32-bit lane; the other bytes are zeroed by a mask, so one permute also widens.
DATA pick512<>+0(SB)/8, $0x0000000300000000
DATA pick512<>+8(SB)/8, $0x0000000900000006
DATA pick512<>+16(SB)/8, $0x0000000f0000000c
DATA pick512<>+24(SB)/8, $0x0000001500000012
DATA pick512<>+32(SB)/8, $0x0000001b00000018
DATA pick512<>+40(SB)/8, $0x000000210000001e
DATA pick512<>+48(SB)/8, $0x0000002700000024
DATA pick512<>+56(SB)/8, $0x0000002d0000002a
DATA pick512<>+64(SB)/8, $0x0000000400000001
DATA pick512<>+72(SB)/8, $0x0000000a00000007
DATA pick512<>+80(SB)/8, $0x000000100000000d
DATA pick512<>+88(SB)/8, $0x0000001600000013
DATA pick512<>+96(SB)/8, $0x0000001c00000019
DATA pick512<>+104(SB)/8, $0x000000220000001f
DATA pick512<>+112(SB)/8, $0x0000002800000025
DATA pick512<>+120(SB)/8, $0x0000002e0000002b
DATA pick512<>+128(SB)/8, $0x0000000500000002
DATA pick512<>+136(SB)/8, $0x0000000b00000008
DATA pick512<>+144(SB)/8, $0x000000110000000e
DATA pick512<>+152(SB)/8, $0x0000001700000014
DATA pick512<>+160(SB)/8, $0x0000001d0000001a
DATA pick512<>+168(SB)/8, $0x0000002300000020
DATA pick512<>+176(SB)/8, $0x0000002900000026
DATA pick512<>+184(SB)/8, $0x0000002f0000002c
GLOBL pick512<>(SB), RODATA|NOPTR, $192

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

// PATCHARGS loads the patch kernels' arguments that hold for every patch: width in CX, the frame
// offset in R8, the kernel at R9 and its mode in R10; and PATCHES' counters.
#define PATCHARGS \
	MOVQ width+32(FP), CX      \
	MOVQ frame+48(FP), R8      \
	MOVQ k+56(FP), R9          \
	MOVBQZX affine+64(FP), R10 \
	MOVQ out+0(FP), AX         \
	MOVQ AX, outp-8(SP)        \
	MOVQ src+16(FP), AX        \
	MOVQ AX, srcp-16(SP)       \
	MOVQ AX, rowp-24(SP)       \
	MOVQ AX, winp-32(SP)       \
	MOVQ across+72(FP), AX     \
	MOVQ AX, na-40(SP)         \
	MOVQ down+80(FP), AX       \
	MOVQ AX, nd-48(SP)         \
	MOVQ wins+88(FP), AX       \
	MOVQ AX, nw-56(SP)

// PATCH points the row loop at the current patch: channel c's row at DI, R12, R13, the pixels at SI,
// the rows to go in R11.
#define PATCH \
	MOVQ outp-8(SP), DI       \
	MOVQ channel+8(FP), AX    \
	LEAQ (DI)(AX*1), R12      \
	LEAQ (R12)(AX*1), R13     \
	MOVQ srcp-16(SP), SI      \
	MOVQ rows+40(FP), R11

// NEXTPATCH moves on to the next patch — to the right within a window's row of patches, down to its
// next row, or to the next window — and jumps to again, or falls through after the last. AX and R11
// are free here.
#define NEXTPATCH(again, down, win, moved, done) \
	MOVQ step+96(FP), AX      \
	ADDQ AX, outp-8(SP)       \
	DECQ na-40(SP)            \
	JZ   down                 \
	LEAQ (CX)(CX*2), AX       \
	ADDQ AX, srcp-16(SP)      \
	JMP  again                \
down:                         \
	MOVQ across+72(FP), AX    \
	MOVQ AX, na-40(SP)        \
	DECQ nd-48(SP)            \
	JZ   win                  \
	MOVQ rows+40(FP), AX      \
	IMULQ stride+24(FP), AX   \
	ADDQ rowp-24(SP), AX      \
	JMP  moved                \
win:                          \
	DECQ nw-56(SP)            \
	JZ   done                 \
	MOVQ down+80(FP), AX      \
	MOVQ AX, nd-48(SP)        \
	MOVQ across+72(FP), AX    \
	IMULQ CX, AX              \
	LEAQ (AX)(AX*2), AX       \
	ADDQ winp-32(SP), AX      \
	MOVQ AX, winp-32(SP)      \
moved:                        \
	MOVQ AX, rowp-24(SP)      \
	MOVQ AX, srcp-16(SP)      \
	JMP  again                \
done:

// NEXTROW moves PATCH's pointers on a row and counts it down (Z set after the last).
#define NEXTROW \
	ADDQ stride+24(FP), SI \
	LEAQ (DI)(CX*2), DI    \
	LEAQ (R12)(CX*2), R12  \
	LEAQ (R13)(CX*2), R13  \
	DECQ R11

// func patchAVX2(out *byte, channel int, src *uint8, stride, width, rows, frame int, k *levelKernel, affine bool, across, down, wins, step int)
//
// Patches of rows rows of width pixels, src rows stride bytes apart: wins merge windows side by side,
// each down x across patches, patch after patch in the windows' order (across fastest) step bytes
// apart from out on. A patch's channel c values of row r go to c·channel + r·2·width, and again
// frame bytes on. Every count is at least one.
TEXT ·patchAVX2(SB), NOSPLIT, $56-104
	PATCHARGS
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

patch:
	PATCH

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

	NEXTROW
	JNZ  row

	NEXTPATCH(patch, down, win, moved, done)
	VZEROUPPER
	RET

// PICK512 gathers sixteen pixels' channel (indices idx) from Z0 as int32 in Z1; K3 keeps each lane's
// low byte.
#define PICK512(idx) \
	VPERMB.Z Z0, idx, K3, Z1

// AFFINE512 is AFFINE on sixteen lanes in Z1.
#define AFFINE512(a, b) \
	VCVTDQ2PS Z1, Z1 \
	VMULPS a, Z1, Z1 \
	VADDPS b, Z1, Z1

// EXACT512 is EXACT on sixteen lanes in Z1, the scale in Z29.
#define EXACT512(a, b) \
	VCVTDQ2PD Y1, Z2           \
	VEXTRACTI64X4 $1, Z1, Y3   \
	VCVTDQ2PD Y3, Z3           \
	VMULPD Z29, Z2, Z2         \
	VMULPD Z29, Z3, Z3         \
	VCVTPD2PS Z2, Y2           \
	VCVTPD2PS Z3, Y3           \
	VINSERTF64X4 $1, Y3, Z2, Z1 \
	VSUBPS a, Z1, Z1           \
	VDIVPS b, Z1, Z1

// VCVTNEPS2BF16 Z1, Y1 (EVEX.512.F3.0F38.W0 72 /r), which the Go assembler does not know.
#define CVTNEPS2BF16_Z1_Y1 \
	LONG $0x487ef262 \
	WORD $0xc972

// STORE512 rounds Z1 to bfloat16 and stores the lanes kst keeps at base + 2·BX and again R8 bytes on.
#define STORE512(base, kst) \
	CVTNEPS2BF16_Z1_Y1        \
	LEAQ (base)(BX*2), AX     \
	VMOVDQU16 Y1, kst, (AX)   \
	VMOVDQU16 Y1, kst, (AX)(R8*1)

// CHUNK512 loads the pixels kld keeps from pixel BX on, and computes and stores the three channels'
// values kst keeps, with op (AFFINE512 or EXACT512).
#define CHUNK512(op, kld, kst) \
	LEAQ (BX)(BX*2), AX          \
	VMOVDQU8.Z (SI)(AX*1), kld, Z0 \
	PICK512(Z20)                 \
	op(Z23, Z26)                 \
	STORE512(DI, kst)            \
	PICK512(Z21)                 \
	op(Z24, Z27)                 \
	STORE512(R12, kst)           \
	PICK512(Z22)                 \
	op(Z25, Z28)                 \
	STORE512(R13, kst)

// func patchAVX512(out *byte, channel int, src *uint8, stride, width, rows, frame int, k *levelKernel, affine bool, across, down, wins, step int)
//
// patchAVX2's contract on sixteen pixels a step, any width: the last step of a row is masked (loads
// of masked-off bytes do not fault), so nothing outside the rows is read or written.
TEXT ·patchAVX512(SB), NOSPLIT, $56-104
	PATCHARGS
	VMOVDQU64 pick512<>+0(SB), Z20
	VMOVDQU64 pick512<>+64(SB), Z21
	VMOVDQU64 pick512<>+128(SB), Z22
	VBROADCASTSS 0(R9), Z23
	VBROADCASTSS 32(R9), Z24
	VBROADCASTSS 64(R9), Z25
	VBROADCASTSS 96(R9), Z26
	VBROADCASTSS 128(R9), Z27
	VBROADCASTSS 160(R9), Z28
	VBROADCASTSD 192(R9), Z29
	MOVQ $0x1111111111111111, AX
	KMOVQ AX, K3
	// K4, K5: a whole step's 48 bytes and 16 values; K1, K2: the last step's, of 1 to 16 pixels.
	MOVQ $-1, DX
	MOVQ $48, AX
	BZHIQ AX, DX, AX
	KMOVQ AX, K4
	MOVQ $0xffff, AX
	KMOVD AX, K5
	LEAQ -1(CX), AX
	ANDQ $15, AX
	INCQ AX
	BZHIQ AX, DX, BX
	KMOVD BX, K2
	LEAQ (AX)(AX*2), AX
	BZHIQ AX, DX, BX
	KMOVQ BX, K1

patch512:
	PATCH

row512:
	PREFETCHT0 256(SI) // as patchAVX2 does
	XORQ BX, BX

full512:
	LEAQ 16(BX), AX
	CMPQ AX, CX
	JGE  last512
	TESTQ R10, R10
	JZ   fullexact
	CHUNK512(AFFINE512, K4, K5)
	ADDQ $16, BX
	JMP  full512

fullexact:
	CHUNK512(EXACT512, K4, K5)
	ADDQ $16, BX
	JMP  full512

last512:
	TESTQ R10, R10
	JZ   lastexact
	CHUNK512(AFFINE512, K1, K2)
	JMP  next512

lastexact:
	CHUNK512(EXACT512, K1, K2)

next512:
	NEXTROW
	JNZ  row512

	NEXTPATCH(patch512, down512, win512, moved512, done512)
	// VZEROUPPER leaves Z16-Z31 as they are; zeroing the ones used here
	// keeps dirty upper ZMM state from following the caller into SSE
	// code on CPUs that track it (Intel's), at ten instructions a call.
	VPXORQ Z20, Z20, Z20
	VPXORQ Z21, Z21, Z21
	VPXORQ Z22, Z22, Z22
	VPXORQ Z23, Z23, Z23
	VPXORQ Z24, Z24, Z24
	VPXORQ Z25, Z25, Z25
	VPXORQ Z26, Z26, Z26
	VPXORQ Z27, Z27, Z27
	VPXORQ Z28, Z28, Z28
	VPXORQ Z29, Z29, Z29
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
