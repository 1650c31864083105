#include "textflag.h"

// Shuffles of sixteen loaded bytes (five RGB pixels) into int16 (p0, p1) pairs per channel, the
// fourth pair zero: pixels 0-1 and pixels 2-3. The same in both lanes.
DATA shufA<>+0(SB)/8, $0x8004800180038000
DATA shufA<>+8(SB)/8, $0x8080808080058002
DATA shufA<>+16(SB)/8, $0x8004800180038000
DATA shufA<>+24(SB)/8, $0x8080808080058002
GLOBL shufA<>(SB), RODATA|NOPTR, $32

DATA shufB<>+0(SB)/8, $0x800a800780098006
DATA shufB<>+8(SB)/8, $0x80808080800b8008
DATA shufB<>+16(SB)/8, $0x800a800780098006
DATA shufB<>+24(SB)/8, $0x80808080800b8008
GLOBL shufB<>(SB), RODATA|NOPTR, $32

// The shuffle of pixel 4 (and a zero fifth tap) for the five-tap kernel, in both lanes.
DATA shufC<>+0(SB)/8, $0x8080800d8080800c
DATA shufC<>+8(SB)/8, $0x808080808080800e
DATA shufC<>+16(SB)/8, $0x8080800d8080800c
DATA shufC<>+24(SB)/8, $0x808080808080800e
GLOBL shufC<>(SB), RODATA|NOPTR, $32

// Four (r, g, b, 0) dwords to twelve RGB bytes.
DATA pack12<>+0(SB)/8, $0x0908060504020100
DATA pack12<>+8(SB)/8, $0x808080800e0d0c0a
GLOBL pack12<>(SB), RODATA|NOPTR, $16

// The dword order that undoes the in-lane packing of four vectors of eight int32.
DATA permPack<>+0(SB)/8, $0x0000000400000000
DATA permPack<>+8(SB)/8, $0x0000000500000001
DATA permPack<>+16(SB)/8, $0x0000000600000002
DATA permPack<>+24(SB)/8, $0x0000000700000003
GLOBL permPack<>(SB), RODATA|NOPTR, $32

// ROUNDING loads the rounding half into every dword of Y13 and the shift into X12.
#define ROUNDING(half, prec) \
	MOVL half, AX          \
	VMOVD AX, X13          \
	VPBROADCASTD X13, Y13  \
	VMOVQ prec, X12

// NARROW shifts the 32 sums in Y0-Y3 right by X12 and packs them, saturated to 0..255, into Y0 —
// in the in-lane order of the pack instructions, which the caller undoes.
#define NARROW \
	VPSRAD X12, Y0, Y0    \
	VPSRAD X12, Y1, Y1    \
	VPSRAD X12, Y2, Y2    \
	VPSRAD X12, Y3, Y3    \
	VPACKSSDW Y1, Y0, Y0  \
	VPACKSSDW Y3, Y2, Y2  \
	VPACKUSWB Y2, Y0, Y0

// func hconvAVX2(out, in *uint8, start *int32, wh, wl *int16, pairs, groups int, half int32, prec uint)
TEXT ·hconvAVX2(SB), NOSPLIT, $0-72
	MOVQ out+0(FP), DI
	MOVQ in+8(FP), SI
	MOVQ start+16(FP), R8
	MOVQ wh+24(FP), R9
	MOVQ wl+32(FP), R10
	MOVQ pairs+40(FP), CX
	ROUNDING(half+56(FP), prec+64(FP))
	VMOVDQU shufA<>(SB), Y14
	VMOVDQU shufB<>(SB), Y15
	TESTQ CX, CX
	JZ   hdone

hpair:
	MOVLQSX 0(R8), AX
	MOVLQSX 4(R8), BX
	LEAQ (AX)(AX*2), AX
	LEAQ (BX)(BX*2), BX
	ADDQ SI, AX // pixel 2q's span
	ADDQ SI, BX // pixel 2q+1's span
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	MOVQ groups+48(FP), DX

hgroup:
	VMOVDQU (AX), X2
	VINSERTI128 $1, (BX), Y2, Y2
	VPSHUFB Y14, Y2, Y3
	VPSHUFB Y15, Y2, Y4
	VPMADDWD (R9), Y3, Y5
	VPMADDWD 32(R9), Y4, Y6
	VPADDD Y5, Y0, Y0
	VPADDD Y6, Y0, Y0
	TESTQ R10, R10
	JZ   hnext
	VPMADDWD (R10), Y3, Y5
	VPMADDWD 32(R10), Y4, Y6
	VPADDD Y5, Y1, Y1
	VPADDD Y6, Y1, Y1
	ADDQ $64, R10

hnext:
	ADDQ $64, R9
	ADDQ $12, AX
	ADDQ $12, BX
	DECQ DX
	JNZ  hgroup

	TESTQ R10, R10
	JZ   hround
	VPSLLD $11, Y0, Y0 // pillowSplit
	VPADDD Y1, Y0, Y0

hround:
	VPADDD Y13, Y0, Y0
	VPSRAD X12, Y0, Y0
	VPACKSSDW Y0, Y0, Y0
	VPACKUSWB Y0, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VMOVD X0, 0(DI)
	VMOVD X1, 3(DI)
	ADDQ $6, DI
	ADDQ $8, R8
	DECQ CX
	JNZ  hpair

hdone:
	VZEROUPPER
	RET

// func vconvAVX2(out *uint8, rows **uint8, k *int32, taps, n int, half int32, prec uint)
TEXT ·vconvAVX2(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ n+32(FP), CX
	ROUNDING(half+40(FP), prec+48(FP))
	VMOVDQU permPack<>(SB), Y11
	XORQ SI, SI // byte offset in the row
	MOVQ CX, BX
	SUBQ $32, BX // the last step's offset: a step past it is moved back to overlap
	JB   vdone

vstep:
	CMPQ SI, BX
	CMOVQGT BX, SI
	VMOVDQA Y13, Y0
	VMOVDQA Y13, Y1
	VMOVDQA Y13, Y2
	VMOVDQA Y13, Y3
	MOVQ rows+8(FP), R8
	MOVQ k+16(FP), R9
	MOVQ taps+24(FP), DX

vtap:
	MOVQ (R8), AX
	VPBROADCASTD (R9), Y4
	VPMOVZXBD (AX)(SI*1), Y5
	VPMOVZXBD 8(AX)(SI*1), Y6
	VPMOVZXBD 16(AX)(SI*1), Y7
	VPMOVZXBD 24(AX)(SI*1), Y8
	VPMULLD Y4, Y5, Y5
	VPMULLD Y4, Y6, Y6
	VPMULLD Y4, Y7, Y7
	VPMULLD Y4, Y8, Y8
	VPADDD Y5, Y0, Y0
	VPADDD Y6, Y1, Y1
	VPADDD Y7, Y2, Y2
	VPADDD Y8, Y3, Y3
	ADDQ $8, R8
	ADDQ $4, R9
	DECQ DX
	JNZ  vtap

	NARROW
	VPERMD Y0, Y11, Y0
	VMOVDQU Y0, (DI)(SI*1)
	ADDQ $32, SI
	CMPQ SI, CX
	JB   vstep

vdone:
	VZEROUPPER
	RET

// func vmaddAVX2(out *uint8, rows **uint8, k *int32, pairs, n int, half int32, prec uint)
//
// vconvAVX2 for int16 weights (torch's): two rows a step, their bytes widened to int16 and
// interleaved so that one VPMADDWD multiplies and adds both taps. k holds each pair's two weights in
// one dword; rows holds 2·pairs pointers.
TEXT ·vmaddAVX2(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ n+32(FP), CX
	ROUNDING(half+40(FP), prec+48(FP))
	XORQ SI, SI // byte offset in the row
	MOVQ CX, R10
	SUBQ $32, R10 // the last step's offset: a step past it is moved back to overlap
	JB   mdone

mstep:
	CMPQ SI, R10
	CMOVQGT R10, SI
	VMOVDQA Y13, Y0 // bytes 0-3, 8-11
	VMOVDQA Y13, Y1 // bytes 4-7, 12-15
	VMOVDQA Y13, Y2 // bytes 16-19, 24-27
	VMOVDQA Y13, Y3 // bytes 20-23, 28-31
	MOVQ rows+8(FP), R8
	MOVQ k+16(FP), R9
	MOVQ pairs+24(FP), DX

mpair:
	MOVQ (R8), AX
	MOVQ 8(R8), BX
	VPBROADCASTD (R9), Y4
	VPMOVZXBW (AX)(SI*1), Y5
	VPMOVZXBW (BX)(SI*1), Y6
	VPMOVZXBW 16(AX)(SI*1), Y7
	VPMOVZXBW 16(BX)(SI*1), Y8
	VPUNPCKLWD Y6, Y5, Y9
	VPUNPCKHWD Y6, Y5, Y10
	VPUNPCKLWD Y8, Y7, Y5
	VPUNPCKHWD Y8, Y7, Y6
	VPMADDWD Y4, Y9, Y9
	VPMADDWD Y4, Y10, Y10
	VPMADDWD Y4, Y5, Y5
	VPMADDWD Y4, Y6, Y6
	VPADDD Y9, Y0, Y0
	VPADDD Y10, Y1, Y1
	VPADDD Y5, Y2, Y2
	VPADDD Y6, Y3, Y3
	ADDQ $16, R8
	ADDQ $4, R9
	DECQ DX
	JNZ  mpair

	NARROW // qwords 0-7, 16-23, 8-15, 24-31 of the sums
	VPERMQ $0xd8, Y0, Y0
	VMOVDQU Y0, (DI)(SI*1)
	ADDQ $32, SI
	CMPQ SI, CX
	JB   mstep

mdone:
	VZEROUPPER
	RET

// TAPS5 sums one pixel pair's five taps (its bytes in Y2, shuffled into Y4, Y5 and Y2) against the
// weight vectors at offsets o0, o1, o2 from w into acc.
#define TAPS5(w, o0, o1, o2, acc) \
	VPMADDWD o0(w), Y4, acc  \
	VPMADDWD o1(w), Y5, Y6   \
	VPMADDWD o2(w), Y2, Y7   \
	VPADDD Y6, acc, acc      \
	VPADDD Y7, acc, acc

// SPREAD5 loads the spans of the pixels at a (low lane) and b (high lane) and shuffles them into
// the tap pairs TAPS5 reads.
#define SPREAD5(a, b) \
	VMOVDQU (a), X2                \
	VINSERTI128 $1, (b), Y2, Y2    \
	VPSHUFB Y14, Y2, Y4            \
	VPSHUFB Y15, Y2, Y5            \
	VPSHUFB Y11, Y2, Y2

// QUADSPANS points AX, BX, R11 and R12 at the spans of the four pixels whose starts R8 holds.
#define QUADSPANS \
	MOVLQSX 0(R8), AX         \
	MOVLQSX 4(R8), BX         \
	MOVLQSX 8(R8), R11        \
	MOVLQSX 12(R8), R12       \
	LEAQ (AX)(AX*2), AX       \
	LEAQ (BX)(BX*2), BX       \
	LEAQ (R11)(R11*2), R11    \
	LEAQ (R12)(R12*2), R12    \
	ADDQ SI, AX               \
	ADDQ SI, BX               \
	ADDQ SI, R11              \
	ADDQ SI, R12

// QUADSTORE rounds the four pixels' sums (pixels 0, 1 in Y0; 2, 3 in Y1), stores their twelve bytes
// at DI and moves DI and R8 to the next four.
#define QUADSTORE \
	VPADDD Y13, Y0, Y0    \
	VPADDD Y13, Y1, Y1    \
	VPSRAD X12, Y0, Y0    \
	VPSRAD X12, Y1, Y1    \
	VPACKSSDW Y1, Y0, Y0  \
	VPACKUSWB Y0, Y0, Y0  \
	VPERMD Y0, Y10, Y0    \
	VPSHUFB X9, X0, X0    \
	VMOVDQU X0, (DI)      \
	ADDQ $12, DI          \
	ADDQ $16, R8

// func hconv5AVX2(out, in *uint8, start *int32, wh, wl *int16, quads int, half int32, prec uint)
//
// hconvAVX2 for spans of at most five taps (every enlargement), four output pixels a step: one
// sixteen-byte load holds a pixel's five inputs, three shuffles spread them over three VPMADDWD, and
// the four results leave in one store. wh (and wl) hold, per pixel pair, three vectors: taps 0-1,
// 2-3 and 4.
TEXT ·hconv5AVX2(SB), NOSPLIT, $0-64
	MOVQ out+0(FP), DI
	MOVQ in+8(FP), SI
	MOVQ start+16(FP), R8
	MOVQ wh+24(FP), R9
	MOVQ wl+32(FP), R10
	MOVQ quads+40(FP), CX
	ROUNDING(half+48(FP), prec+56(FP))
	VMOVDQU shufA<>(SB), Y14
	VMOVDQU shufB<>(SB), Y15
	VMOVDQU shufC<>(SB), Y11
	VMOVDQU permPack<>(SB), Y10
	VMOVDQU pack12<>(SB), X9
	TESTQ CX, CX
	JZ   fdone

fquad:
	QUADSPANS
	SPREAD5(AX, BX)
	TAPS5(R9, 0, 32, 64, Y0)
	TESTQ R10, R10
	JZ   fpair1
	TAPS5(R10, 0, 32, 64, Y8)
	VPSLLD $11, Y0, Y0 // pillowSplit
	VPADDD Y8, Y0, Y0

fpair1:
	SPREAD5(R11, R12)
	TAPS5(R9, 96, 128, 160, Y1)
	TESTQ R10, R10
	JZ   fround
	TAPS5(R10, 96, 128, 160, Y8)
	VPSLLD $11, Y1, Y1
	VPADDD Y8, Y1, Y1
	ADDQ $192, R10

fround:
	QUADSTORE
	ADDQ $192, R9
	DECQ CX
	JNZ  fquad

fdone:
	VZEROUPPER
	RET

// TAPS4 is TAPS5 for spans of at most four taps: taps 0-1 (Y4) and 2-3 (Y5) only.
#define TAPS4(w, o0, o1, acc) \
	VPMADDWD o0(w), Y4, acc  \
	VPMADDWD o1(w), Y5, Y6   \
	VPADDD Y6, acc, acc

// SPREAD4 is SPREAD5 without pixel 4.
#define SPREAD4(a, b) \
	VMOVDQU (a), X2                \
	VINSERTI128 $1, (b), Y2, Y2    \
	VPSHUFB Y14, Y2, Y4            \
	VPSHUFB Y15, Y2, Y5

// func hconv4AVX2(out, in *uint8, start *int32, wh, wl *int16, quads int, half int32, prec uint)
//
// hconv5AVX2 for spans of at most four taps (every enlargement: torch's and Pillow's spans there
// cover four inputs), two weight vectors a pixel pair: a third of the shuffles and multiply-adds
// fewer.
TEXT ·hconv4AVX2(SB), NOSPLIT, $0-64
	MOVQ out+0(FP), DI
	MOVQ in+8(FP), SI
	MOVQ start+16(FP), R8
	MOVQ wh+24(FP), R9
	MOVQ wl+32(FP), R10
	MOVQ quads+40(FP), CX
	ROUNDING(half+48(FP), prec+56(FP))
	VMOVDQU shufA<>(SB), Y14
	VMOVDQU shufB<>(SB), Y15
	VMOVDQU permPack<>(SB), Y10
	VMOVDQU pack12<>(SB), X9
	TESTQ CX, CX
	JZ   gdone

gquad:
	QUADSPANS
	SPREAD4(AX, BX)
	TAPS4(R9, 0, 32, Y0)
	TESTQ R10, R10
	JZ   gpair1
	TAPS4(R10, 0, 32, Y8)
	VPSLLD $11, Y0, Y0 // pillowSplit
	VPADDD Y8, Y0, Y0

gpair1:
	SPREAD4(R11, R12)
	TAPS4(R9, 64, 96, Y1)
	TESTQ R10, R10
	JZ   ground
	TAPS4(R10, 64, 96, Y8)
	VPSLLD $11, Y1, Y1
	VPADDD Y8, Y1, Y1
	ADDQ $128, R10

ground:
	QUADSTORE
	ADDQ $128, R9
	DECQ CX
	JNZ  gquad

gdone:
	VZEROUPPER
	RET
