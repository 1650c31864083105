//go:build !purego

#include "textflag.h"

// islowAVX2 is islowGo (idct.go) with each pass run on eight lanes at once: 32-bit lanes wrap,
// multiply and shift exactly as Go's int32 arithmetic, the zero-column and zero-row shortcuts are
// blended in under the same conditions, and the final clamp is the saturation of VPACKSSDW then
// VPACKUSWB. Pass 1 works on rows of the block (lanes are columns), pass 2 on the transposed
// workspace (lanes are rows); a second transpose brings the output back to rows.

// PASS is one jidctint.c pass on x0..x7 in Y0..Y7, giving out0..out7 in Y0..Y7 descaled by
// shift after adding the rounding constant in Y9; lanes set in the mask Y15 take Y14 instead
// (the shortcut value). Clobbers Y8, Y10..Y13.
#define PASS(shift) \
	VPADDD  Y6, Y2, Y8 \
	VPMULLD k0541196<>(SB), Y8, Y8 \
	VPMULLD k1847759<>(SB), Y6, Y6 \
	VPSUBD  Y6, Y8, Y6 \
	VPMULLD k0765367<>(SB), Y2, Y2 \
	VPADDD  Y2, Y8, Y2 \
	VPADDD  Y4, Y0, Y8 \
	VPSLLD  $13, Y8, Y8 \
	VPSUBD  Y4, Y0, Y0 \
	VPSLLD  $13, Y0, Y0 \
	VPADDD  Y2, Y8, Y10 \
	VPSUBD  Y2, Y8, Y13 \
	VPADDD  Y6, Y0, Y11 \
	VPSUBD  Y6, Y0, Y12 \
	VPADDD  Y1, Y7, Y0 \
	VPADDD  Y3, Y5, Y2 \
	VPADDD  Y3, Y7, Y4 \
	VPADDD  Y1, Y5, Y6 \
	VPADDD  Y6, Y4, Y8 \
	VPMULLD k1175876<>(SB), Y8, Y8 \
	VPMULLD k0298631<>(SB), Y7, Y7 \
	VPMULLD k2053120<>(SB), Y5, Y5 \
	VPMULLD k3072711<>(SB), Y3, Y3 \
	VPMULLD k1501321<>(SB), Y1, Y1 \
	VPMULLD kN0899976<>(SB), Y0, Y0 \
	VPMULLD kN2562915<>(SB), Y2, Y2 \
	VPMULLD kN1961571<>(SB), Y4, Y4 \
	VPADDD  Y8, Y4, Y4 \
	VPMULLD kN0390181<>(SB), Y6, Y6 \
	VPADDD  Y8, Y6, Y6 \
	VPADDD  Y0, Y7, Y7 \
	VPADDD  Y4, Y7, Y7 \
	VPADDD  Y2, Y5, Y5 \
	VPADDD  Y6, Y5, Y5 \
	VPADDD  Y2, Y3, Y3 \
	VPADDD  Y4, Y3, Y3 \
	VPADDD  Y0, Y1, Y1 \
	VPADDD  Y6, Y1, Y1 \
	VPADDD  Y9, Y10, Y10 \
	VPADDD  Y1, Y10, Y0 \
	VPSUBD  Y1, Y10, Y10 \
	VPADDD  Y9, Y11, Y11 \
	VPADDD  Y3, Y11, Y1 \
	VPSUBD  Y3, Y11, Y11 \
	VPADDD  Y9, Y12, Y12 \
	VPADDD  Y5, Y12, Y2 \
	VPSUBD  Y5, Y12, Y12 \
	VPADDD  Y9, Y13, Y13 \
	VPADDD  Y7, Y13, Y3 \
	VPSUBD  Y7, Y13, Y4 \
	VPSRAD  $shift, Y0, Y0 \
	VPSRAD  $shift, Y1, Y1 \
	VPSRAD  $shift, Y2, Y2 \
	VPSRAD  $shift, Y3, Y3 \
	VPSRAD  $shift, Y4, Y4 \
	VPSRAD  $shift, Y12, Y5 \
	VPSRAD  $shift, Y11, Y6 \
	VPSRAD  $shift, Y10, Y7 \
	VPBLENDVB Y15, Y14, Y0, Y0 \
	VPBLENDVB Y15, Y14, Y1, Y1 \
	VPBLENDVB Y15, Y14, Y2, Y2 \
	VPBLENDVB Y15, Y14, Y3, Y3 \
	VPBLENDVB Y15, Y14, Y4, Y4 \
	VPBLENDVB Y15, Y14, Y5, Y5 \
	VPBLENDVB Y15, Y14, Y6, Y6 \
	VPBLENDVB Y15, Y14, Y7, Y7

// TRANSPOSE turns rows Y0..Y7 (8 int32 each) into columns col0..col7 held in
// Y10, Y11, Y12, Y13, Y14, Y15, Y3, Y5; it clobbers Y0..Y9.
#define TRANSPOSE \
	VPUNPCKLDQ   Y1, Y0, Y8  \
	VPUNPCKHDQ   Y1, Y0, Y9  \
	VPUNPCKLDQ   Y3, Y2, Y0  \
	VPUNPCKHDQ   Y3, Y2, Y1  \
	VPUNPCKLDQ   Y5, Y4, Y2  \
	VPUNPCKHDQ   Y5, Y4, Y3  \
	VPUNPCKLDQ   Y7, Y6, Y4  \
	VPUNPCKHDQ   Y7, Y6, Y5  \
	VPUNPCKLQDQ  Y0, Y8, Y6  \
	VPUNPCKHQDQ  Y0, Y8, Y7  \
	VPUNPCKLQDQ  Y1, Y9, Y8  \
	VPUNPCKHQDQ  Y1, Y9, Y0  \
	VPUNPCKLQDQ  Y4, Y2, Y9  \
	VPUNPCKHQDQ  Y4, Y2, Y1  \
	VPUNPCKLQDQ  Y5, Y3, Y2  \
	VPUNPCKHQDQ  Y5, Y3, Y4  \
	VPERM2I128   $0x20, Y9, Y6, Y10 \
	VPERM2I128   $0x31, Y9, Y6, Y14 \
	VPERM2I128   $0x20, Y1, Y7, Y11 \
	VPERM2I128   $0x31, Y1, Y7, Y15 \
	VPERM2I128   $0x20, Y2, Y8, Y12 \
	VPERM2I128   $0x31, Y2, Y8, Y3  \
	VPERM2I128   $0x20, Y4, Y0, Y13 \
	VPERM2I128   $0x31, Y4, Y0, Y5

// DEQUANT loads row off/32 of the coefficients times the quantizers.
#define DEQUANT(off, y) VMOVDQU off(SI), y; VPMULLD off(DI), y, y

// func islowAVX2(b, q *Block, dst *byte, stride int)
TEXT ·islowAVX2(SB), NOSPLIT, $0-32
	MOVQ b+0(FP), SI
	MOVQ q+8(FP), DI
	MOVQ dst+16(FP), DX
	MOVQ stride+24(FP), CX

	// Pass 1. Y15: columns whose raw AC coefficients are all zero; Y14: their value dc<<PASS1_BITS.
	VMOVDQU  32(SI), Y15
	VPOR     64(SI), Y15, Y15
	VPOR     96(SI), Y15, Y15
	VPOR     128(SI), Y15, Y15
	VPOR     160(SI), Y15, Y15
	VPOR     192(SI), Y15, Y15
	VPOR     224(SI), Y15, Y15
	// A block without AC coefficients is one value, clamp(((dc*q)<<PASS1_BITS + 16) >> 5 + 128).
	VMOVDQU  0(SI), Y0
	VPAND    kNotDC<>(SB), Y0, Y0
	VPOR     Y15, Y0, Y0
	VPTEST   Y0, Y0
	JZ       dconly
	VPXOR    Y9, Y9, Y9
	VPCMPEQD Y9, Y15, Y15
	DEQUANT(0, Y0)
	DEQUANT(32, Y1)
	DEQUANT(64, Y2)
	DEQUANT(96, Y3)
	DEQUANT(128, Y4)
	DEQUANT(160, Y5)
	DEQUANT(192, Y6)
	DEQUANT(224, Y7)
	VPSLLD   $2, Y0, Y14
	VMOVDQU  kRnd1<>(SB), Y9
	PASS(11)
	TRANSPOSE

	// Pass 2 on the workspace columns. Y15: rows whose w[1..7] are all zero; Y14: their (w[0]+16)>>5.
	VMOVDQA  Y3, Y6
	VMOVDQA  Y5, Y7
	VMOVDQA  Y10, Y0
	VMOVDQA  Y11, Y1
	VMOVDQA  Y12, Y2
	VMOVDQA  Y13, Y3
	VMOVDQA  Y14, Y4
	VMOVDQA  Y15, Y5
	VPOR     Y2, Y1, Y15
	VPOR     Y3, Y15, Y15
	VPOR     Y4, Y15, Y15
	VPOR     Y5, Y15, Y15
	VPOR     Y6, Y15, Y15
	VPOR     Y7, Y15, Y15
	VPXOR    Y9, Y9, Y9
	VPCMPEQD Y9, Y15, Y15
	VPADDD   k16<>(SB), Y0, Y14
	VPSRAD   $5, Y14, Y14
	VMOVDQU  kRnd2<>(SB), Y9
	PASS(18)
	TRANSPOSE

	// Rows 0..7 are Y10, Y11, Y12, Y13, Y14, Y15, Y3, Y5: level shift, saturate to bytes, store.
	VMOVDQU   k128<>(SB), Y9
	VPADDD    Y9, Y10, Y10
	VPADDD    Y9, Y11, Y11
	VPADDD    Y9, Y12, Y12
	VPADDD    Y9, Y13, Y13
	VPADDD    Y9, Y14, Y14
	VPADDD    Y9, Y15, Y15
	VPADDD    Y9, Y3, Y3
	VPADDD    Y9, Y5, Y5
	VPACKSSDW Y11, Y10, Y0
	VPACKSSDW Y13, Y12, Y1
	VPACKSSDW Y15, Y14, Y2
	VPACKSSDW Y5, Y3, Y4
	VPACKUSWB Y1, Y0, Y6
	VPACKUSWB Y4, Y2, Y7
	VMOVDQU   kRowPerm<>(SB), Y8
	VPERMD    Y6, Y8, Y6
	VPERMD    Y7, Y8, Y7

	VMOVQ        X6, (DX)
	VPEXTRQ      $1, X6, (DX)(CX*1)
	LEAQ         (DX)(CX*2), DX
	VEXTRACTI128 $1, Y6, X6
	VMOVQ        X6, (DX)
	VPEXTRQ      $1, X6, (DX)(CX*1)
	LEAQ         (DX)(CX*2), DX
	VMOVQ        X7, (DX)
	VPEXTRQ      $1, X7, (DX)(CX*1)
	LEAQ         (DX)(CX*2), DX
	VEXTRACTI128 $1, Y7, X7
	VMOVQ        X7, (DX)
	VPEXTRQ      $1, X7, (DX)(CX*1)
	VZEROUPPER
	RET

dconly:
	MOVL         0(SI), AX
	IMULL        0(DI), AX
	SHLL         $2, AX
	ADDL         $16, AX
	SARL         $5, AX
	ADDL         $128, AX
	VMOVD        AX, X0
	VPACKSSDW    X0, X0, X0
	VPACKUSWB    X0, X0, X0
	VPBROADCASTB X0, X0
	LEAQ         (CX)(CX*2), BX
	VMOVQ        X0, (DX)
	VMOVQ        X0, (DX)(CX*1)
	VMOVQ        X0, (DX)(CX*2)
	VMOVQ        X0, (DX)(BX*1)
	LEAQ         (DX)(CX*4), DX
	VMOVQ        X0, (DX)
	VMOVQ        X0, (DX)(CX*1)
	VMOVQ        X0, (DX)(CX*2)
	VMOVQ        X0, (DX)(BX*1)
	VZEROUPPER
	RET

// SPLAT defines name as eight int32 lanes of v: the jidctint.c constants FIX(x) = round(x * 2^13),
// the two passes' rounding terms, and the level shift.
#define SPLAT(name, v) \
	DATA name<>+0(SB)/4, $v; DATA name<>+4(SB)/4, $v; DATA name<>+8(SB)/4, $v; DATA name<>+12(SB)/4, $v \
	DATA name<>+16(SB)/4, $v; DATA name<>+20(SB)/4, $v; DATA name<>+24(SB)/4, $v; DATA name<>+28(SB)/4, $v \
	GLOBL name<>(SB), RODATA|NOPTR, $32

SPLAT(k0541196, 4433)
SPLAT(k0765367, 6270)
SPLAT(k1847759, 15137)
SPLAT(k1175876, 9633)
SPLAT(k0298631, 2446)
SPLAT(k2053120, 16819)
SPLAT(k3072711, 25172)
SPLAT(k1501321, 12299)
SPLAT(kN0899976, -7373)
SPLAT(kN2562915, -20995)
SPLAT(kN1961571, -16069)
SPLAT(kN0390181, -3196)
SPLAT(kRnd1, 1024)
SPLAT(kRnd2, 131072)
SPLAT(k16, 16)
SPLAT(k128, 128)

// kNotDC keeps all lanes of the first coefficient row but the DC.
DATA kNotDC<>+0(SB)/4, $0
DATA kNotDC<>+4(SB)/4, $-1
DATA kNotDC<>+8(SB)/4, $-1
DATA kNotDC<>+12(SB)/4, $-1
DATA kNotDC<>+16(SB)/4, $-1
DATA kNotDC<>+20(SB)/4, $-1
DATA kNotDC<>+24(SB)/4, $-1
DATA kNotDC<>+28(SB)/4, $-1
GLOBL kNotDC<>(SB), RODATA|NOPTR, $32

// kRowPerm gathers each output row's two 4-byte halves after the packs.
DATA kRowPerm<>+0(SB)/4, $0
DATA kRowPerm<>+4(SB)/4, $4
DATA kRowPerm<>+8(SB)/4, $1
DATA kRowPerm<>+12(SB)/4, $5
DATA kRowPerm<>+16(SB)/4, $2
DATA kRowPerm<>+20(SB)/4, $6
DATA kRowPerm<>+24(SB)/4, $3
DATA kRowPerm<>+28(SB)/4, $7
GLOBL kRowPerm<>(SB), RODATA|NOPTR, $32
