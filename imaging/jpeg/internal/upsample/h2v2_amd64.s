//go:build !purego

#include "textflag.h"

// Sums are at most 4*255 and the filtered values at most 16*255+8, so 16-bit lanes hold them.

// func h2v2SumsAVX2(sums *int16, near, far *byte, n int)
TEXT ·h2v2SumsAVX2(SB), NOSPLIT, $0-32
	MOVQ sums+0(FP), DI
	MOVQ near+8(FP), SI
	MOVQ far+16(FP), BX
	MOVQ n+24(FP), CX
	XORQ AX, AX

sums:
	VPMOVZXBW (SI)(AX*1), Y0
	VPMOVZXBW (BX)(AX*1), Y1
	VPSLLW    $1, Y0, Y2
	VPADDW    Y2, Y0, Y0
	VPADDW    Y1, Y0, Y0
	VMOVDQU   Y0, (DI)(AX*2)
	ADDQ      $16, AX
	CMPQ      AX, CX
	JB        sums
	VZEROUPPER
	RET

// func h2v2FilterAVX2(out *byte, sums *int16, n int)
TEXT ·h2v2FilterAVX2(SB), NOSPLIT, $0-24
	MOVQ out+0(FP), DI
	MOVQ sums+8(FP), SI
	MOVQ n+16(FP), CX
	VPBROADCASTW k8<>(SB), Y8
	VPBROADCASTW k7<>(SB), Y7
	XORQ AX, AX

filter:
	VMOVDQU    2(SI)(AX*2), Y0 // this
	VMOVDQU    0(SI)(AX*2), Y1 // last
	VMOVDQU    4(SI)(AX*2), Y2 // next
	VPSLLW     $1, Y0, Y3
	VPADDW     Y3, Y0, Y0
	VPADDW     Y0, Y1, Y1
	VPADDW     Y8, Y1, Y1
	VPSRLW     $4, Y1, Y1      // even outputs
	VPADDW     Y0, Y2, Y2
	VPADDW     Y7, Y2, Y2
	VPSRLW     $4, Y2, Y2      // odd outputs
	VPUNPCKLWD Y2, Y1, Y3
	VPUNPCKHWD Y2, Y1, Y4
	VPACKUSWB  Y4, Y3, Y3
	VMOVDQU    Y3, (DI)(AX*2)
	ADDQ       $16, AX
	CMPQ       AX, CX
	JB         filter
	VZEROUPPER
	RET

DATA k8<>+0(SB)/2, $8
GLOBL k8<>(SB), RODATA|NOPTR, $2
DATA k7<>+0(SB)/2, $7
GLOBL k7<>(SB), RODATA|NOPTR, $2
