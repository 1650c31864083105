#include "textflag.h"

// The AVX-512 kernels (VBMI byte permutes, VNNI VPDPWSSD). They use Z0-Z15 only, so that
// VZEROUPPER leaves no dirty upper state behind.

// vperm: for vmaddAVX512, the VPERMI2B index that gathers, from two rows' 64 bytes, the int16 pairs
// (row a byte, row b byte) of columns 16L+m into dword 4L+m; adding 4d to it gathers columns
// 16L+4d+m, into vector d — the order the in-lane packs of the four sums undo into columns 0..63.
// Bytes 1 and 3 of each dword are zeroed by the mask.
DATA vperm<>+0(SB)/8, $0x0041000100400000
DATA vperm<>+8(SB)/8, $0x0043000300420002
DATA vperm<>+16(SB)/8, $0x0051001100500010
DATA vperm<>+24(SB)/8, $0x0053001300520012
DATA vperm<>+32(SB)/8, $0x0061002100600020
DATA vperm<>+40(SB)/8, $0x0063002300620022
DATA vperm<>+48(SB)/8, $0x0071003100700030
DATA vperm<>+56(SB)/8, $0x0073003300720032
GLOBL vperm<>(SB), RODATA|NOPTR, $64

// compact48: bytes 0-11 of each lane (the in-lane packs of three sum vectors) to bytes 0-47.
DATA compact48<>+0(SB)/8, $0x0706050403020100
DATA compact48<>+8(SB)/8, $0x131211100b0a0908
DATA compact48<>+16(SB)/8, $0x1b1a191817161514
DATA compact48<>+24(SB)/8, $0x2726252423222120
DATA compact48<>+32(SB)/8, $0x333231302b2a2928
DATA compact48<>+40(SB)/8, $0x3b3a393837363534
DATA compact48<>+48(SB)/8, $0x0000000000000000
DATA compact48<>+56(SB)/8, $0x0000000000000000
GLOBL compact48<>(SB), RODATA|NOPTR, $64

// ROUNDING512 loads the rounding half into every dword of Z13, the shift into X12 and, into K1,
// the mask that keeps the low byte of every word (zero-extending permuted bytes to int16).
#define ROUNDING512(half, prec) \
	MOVL half, AX                   \
	VPBROADCASTD AX, Z13            \
	MOVQ prec, AX                   \
	VMOVQ AX, X12                   \
	MOVQ $0x5555555555555555, AX    \
	KMOVQ AX, K1

// func vmaddAVX512(out *uint8, rows **uint8, k *int32, pairs, n int, half int32, prec uint)
//
// vmaddAVX2 sixty-four bytes a step: per pair of rows, four VPERMI2B spread the rows' bytes into
// (a, b) int16 pairs and four VPDPWSSD multiply and accumulate them. n >= 64; the last step
// overlaps the one before.
TEXT ·vmaddAVX512(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ n+32(FP), CX
	ROUNDING512(half+40(FP), prec+48(FP))
	VMOVDQU64 vperm<>(SB), Z6
	MOVL $0x04040404, AX
	VPBROADCASTD AX, Z8
	VPADDB Z8, Z6, Z7
	VPADDB Z8, Z7, Z14
	VPADDB Z8, Z14, Z15
	XORQ SI, SI // byte offset in the row
	MOVQ CX, R10
	SUBQ $64, R10 // the last step's offset: a step past it is moved back to overlap
	JB   zdone

zstep:
	CMPQ SI, R10
	CMOVQGT R10, SI
	VMOVDQA64 Z13, Z0
	VMOVDQA64 Z13, Z1
	VMOVDQA64 Z13, Z2
	VMOVDQA64 Z13, Z3
	MOVQ rows+8(FP), R8
	MOVQ k+16(FP), R9
	MOVQ pairs+24(FP), DX

zpair:
	MOVQ (R8), AX
	MOVQ 8(R8), BX
	VMOVDQU64 (AX)(SI*1), Z4
	VMOVDQU64 (BX)(SI*1), Z5
	VMOVDQA64 Z6, Z8
	VPERMI2B.Z Z5, Z4, K1, Z8
	VMOVDQA64 Z7, Z9
	VPERMI2B.Z Z5, Z4, K1, Z9
	VMOVDQA64 Z14, Z10
	VPERMI2B.Z Z5, Z4, K1, Z10
	VMOVDQA64 Z15, Z11
	VPERMI2B.Z Z5, Z4, K1, Z11
	VPDPWSSD.BCST (R9), Z8, Z0
	VPDPWSSD.BCST (R9), Z9, Z1
	VPDPWSSD.BCST (R9), Z10, Z2
	VPDPWSSD.BCST (R9), Z11, Z3
	ADDQ $16, R8
	ADDQ $4, R9
	DECQ DX
	JNZ  zpair

	VPSRAD X12, Z0, Z0
	VPSRAD X12, Z1, Z1
	VPSRAD X12, Z2, Z2
	VPSRAD X12, Z3, Z3
	VPACKSSDW Z1, Z0, Z0
	VPACKSSDW Z3, Z2, Z2
	VPACKUSWB Z2, Z0, Z0
	VMOVDQU64 Z0, (DI)(SI*1)
	ADDQ $64, SI
	CMPQ SI, CX
	JB   zstep

zdone:
	VZEROUPPER
	RET

// NARROW48 rounds the three sum vectors Z0-Z2 and packs them, saturated to 0..255, into the group's
// 48 output bytes in order in Z0.
#define NARROW48 \
	VPSRAD X12, Z0, Z0    \
	VPSRAD X12, Z1, Z1    \
	VPSRAD X12, Z2, Z2    \
	VPACKSSDW Z1, Z0, Z0  \
	VPACKSSDW Z2, Z2, Z2  \
	VPACKUSWB Z2, Z0, Z0  \
	VPERMB Z0, Z14, Z0

// SUMVEC accumulates into acc, from the rounding half, one sum vector of the group at R9 (load in
// Z15): spread gathers its dwords' span offsets into t0, the header's add vectors at a0 and a1 from
// R10 turn them into the gathers' indexes for tap pairs 0 and 1, and the gathered int16 pairs meet
// the weights at w0 and w1 from R9.
#define SUMVEC(spread, a0, a1, w0, w1, t0, t1, acc) \
	VMOVDQA64 Z13, acc                \
	VPERMB.Z 384(R9), spread, K1, t0  \
	VPADDB a1(R10), t0, t1            \
	VPADDB a0(R10), t0, t0            \
	VPERMB.Z Z15, t0, K1, t0          \
	VPERMB.Z Z15, t1, K1, t1          \
	VPDPWSSD w0(R9), t0, acc          \
	VPDPWSSD w1(R9), t1, acc

// SUMVEC6 is SUMVEC for three tap pairs from a 128-byte load (Z15, Z8), gathered by VPERMI2B: its
// header's add vectors at a0, a1, a2 from R10, its weights at w0, w1, w2 from R9.
#define SUMVEC6(spread, a0, a1, a2, w0, w1, w2, acc) \
	VMOVDQA64 Z13, acc                \
	VPERMB.Z 576(R9), spread, K1, Z3  \
	VPADDB a1(R10), Z3, Z4            \
	VPADDB a2(R10), Z3, Z5            \
	VPADDB a0(R10), Z3, Z3            \
	VPERMI2B.Z Z8, Z15, K1, Z3        \
	VPERMI2B.Z Z8, Z15, K1, Z4        \
	VPERMI2B.Z Z8, Z15, K1, Z5        \
	VPDPWSSD w0(R9), Z3, acc          \
	VPDPWSSD w1(R9), Z4, acc          \
	VPDPWSSD w2(R9), Z5, acc

// HZNEXT narrows a group's sums, moves R9 stride bytes on to the next group and, unless this was
// the last (which hzlast stores), stores 64 bytes and goes back to loop.
#define HZNEXT(stride, loop) \
	NARROW48           \
	ADDQ $stride, R9   \
	DECQ CX            \
	JZ   hzlast        \
	VMOVDQU64 Z0, (DI) \
	ADDQ $48, DI       \
	JMP  loop

// func hconvAVX512(out, in *uint8, tab *uint8, groups int, tail uint64, half int32, prec uint, pairs int)
//
// hconv4AVX2 and hconv5AVX2 sixteen output pixels (48 bytes) a step, for spans of up to four taps
// (two tap pairs, every enlargement) or six (three, mild reductions): the group's spans lie within
// one load of 64 bytes (or 128), and per sum vector (three, sixteen output bytes each) and tap pair
// VPERMB (VPERMI2B) gathers the (tap, next tap) byte pairs as int16 and VPDPWSSD multiplies and
// accumulates them. The gathers' indexes are built from the group's sixteen span offsets by the
// header's spread and add vectors (the layout is hvec.build512's). The last group stores only
// tail's bytes; the others store 64 bytes, the 16 past their 48 rewritten by the next group.
TEXT ·hconvAVX512(SB), NOSPLIT, $0-64
	MOVQ out+0(FP), DI
	MOVQ in+8(FP), SI
	MOVQ tab+16(FP), R10
	MOVQ groups+24(FP), CX
	ROUNDING512(half+40(FP), prec+48(FP))
	VMOVDQU64 compact48<>(SB), Z14
	VMOVDQU64 0(R10), Z9 // the spread vectors
	VMOVDQU64 64(R10), Z10
	VMOVDQU64 128(R10), Z11
	TESTQ CX, CX
	JZ   hzdone
	CMPQ pairs+56(FP), $2
	JNE  hzsix
	LEAQ 576(R10), R9 // the first group, after the header

hzfour:
	MOVLQSX 400(R9), AX
	VMOVDQU64 (SI)(AX*1), Z15
	SUMVEC(Z9, 192, 256, 0, 64, Z3, Z4, Z0)
	SUMVEC(Z10, 320, 384, 128, 192, Z5, Z6, Z1)
	SUMVEC(Z11, 448, 512, 256, 320, Z7, Z8, Z2)
	HZNEXT(448, hzfour)

hzsix:
	LEAQ 768(R10), R9

hzsixgroup:
	MOVLQSX 592(R9), AX
	VMOVDQU64 (SI)(AX*1), Z15
	VMOVDQU64 64(SI)(AX*1), Z8
	SUMVEC6(Z9, 192, 256, 320, 0, 64, 128, Z0)
	SUMVEC6(Z10, 384, 448, 512, 192, 256, 320, Z1)
	SUMVEC6(Z11, 576, 640, 704, 384, 448, 512, Z2)
	HZNEXT(640, hzsixgroup)

hzlast:
	KMOVQ tail+32(FP), K2
	VMOVDQU8 Z0, K2, (DI)

hzdone:
	VZEROUPPER
	RET
