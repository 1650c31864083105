//go:build !purego

#include "textflag.h"

// toRGBAVX2 is toRGBGo (ycc.go) on eight pixels at a time: the table entries are the int32
// expressions they were built from (FIX(x) = round(x * 2^16), x = chroma - 128), computed in 32-bit
// lanes, and the range limit is the saturation of VPACKSSDW then VPACKUSWB.

// func toRGBAVX2(out, ys, cbs, crs *byte, n int)
TEXT ·toRGBAVX2(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ ys+8(FP), SI
	MOVQ cbs+16(FP), BX
	MOVQ crs+24(FP), DX
	MOVQ n+32(FP), CX
	VPBROADCASTD k128<>(SB), Y10
	VPBROADCASTD kCrR<>(SB), Y11
	VPBROADCASTD kCbB<>(SB), Y12
	VPBROADCASTD kCbG<>(SB), Y13
	VPBROADCASTD kCrG<>(SB), Y14
	VPBROADCASTD kHalf<>(SB), Y15
	VMOVDQU      kInterleave<>(SB), Y9
	XORQ AX, AX

loop:
	VPMOVZXBD (SI)(AX*1), Y0
	VPMOVZXBD (BX)(AX*1), Y1
	VPMOVZXBD (DX)(AX*1), Y2
	VPSUBD    Y10, Y1, Y1
	VPSUBD    Y10, Y2, Y2

	// R = y + (FIX(1.402)*cr + ONE_HALF) >> 16
	VPMULLD Y11, Y2, Y3
	VPADDD  Y15, Y3, Y3
	VPSRAD  $16, Y3, Y3
	VPADDD  Y0, Y3, Y3

	// B = y + (FIX(1.772)*cb + ONE_HALF) >> 16
	VPMULLD Y12, Y1, Y4
	VPADDD  Y15, Y4, Y4
	VPSRAD  $16, Y4, Y4
	VPADDD  Y0, Y4, Y4

	// G = y + (-FIX(0.34414)*cb + ONE_HALF - FIX(0.71414)*cr) >> 16
	VPMULLD Y13, Y1, Y5
	VPMULLD Y14, Y2, Y6
	VPADDD  Y6, Y5, Y5
	VPADDD  Y15, Y5, Y5
	VPSRAD  $16, Y5, Y5
	VPADDD  Y0, Y5, Y5

	// Each 128-bit lane becomes R0-3 G0-3 B0-3 B0-3 (saturated bytes), then 4 interleaved pixels.
	VPACKSSDW Y5, Y3, Y3
	VPACKSSDW Y4, Y4, Y4
	VPACKUSWB Y4, Y3, Y3
	VPSHUFB   Y9, Y3, Y3
	VMOVQ     X3, (DI)
	VPEXTRD   $2, X3, 8(DI)
	VEXTRACTI128 $1, Y3, X4
	VMOVQ     X4, 12(DI)
	VPEXTRD   $2, X4, 20(DI)

	ADDQ $24, DI
	ADDQ $8, AX
	CMPQ AX, CX
	JB   loop
	VZEROUPPER
	RET

DATA k128<>+0(SB)/4, $128
GLOBL k128<>(SB), RODATA|NOPTR, $4
DATA kCrR<>+0(SB)/4, $91881
GLOBL kCrR<>(SB), RODATA|NOPTR, $4
DATA kCbB<>+0(SB)/4, $116130
GLOBL kCbB<>(SB), RODATA|NOPTR, $4
DATA kCbG<>+0(SB)/4, $-22554
GLOBL kCbG<>(SB), RODATA|NOPTR, $4
DATA kCrG<>+0(SB)/4, $-46802
GLOBL kCrG<>(SB), RODATA|NOPTR, $4
DATA kHalf<>+0(SB)/4, $32768
GLOBL kHalf<>(SB), RODATA|NOPTR, $4

// kInterleave picks R0 G0 B0 R1 G1 B1 R2 G2 B2 R3 G3 B3 out of R0-3 G0-3 B0-3 in each lane.
DATA kInterleave<>+0(SB)/8, $0x0602090501080400
DATA kInterleave<>+8(SB)/8, $0x808080800b07030a
DATA kInterleave<>+16(SB)/8, $0x0602090501080400
DATA kInterleave<>+24(SB)/8, $0x808080800b07030a
GLOBL kInterleave<>(SB), RODATA|NOPTR, $32
