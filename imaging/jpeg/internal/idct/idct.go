// Package idct is libjpeg-turbo's integer ("islow") inverse DCT, jidctint.c, exact to the sample: a Go
// version and, on amd64 with AVX2, an assembly version running the Go version's int32 arithmetic on
// eight columns (then rows) at once, tested identical to it. (libjpeg-turbo's own jidctint-avx2.asm
// works in 16-bit lanes; it agrees with jidctint.c wherever the intermediate values fit, which they do
// for every stream an encoder writes.)
package idct

// Block holds one 8x8 block's DCT coefficients (or quantizers) in natural (row-major) order.
type Block [64]int32

// Constants of libjpeg's jidctint.c (CONST_BITS 13, PASS1_BITS 2): FIX(x) = round(x * 2^13).
const (
	constBits  = 13
	pass1Bits  = 2
	fix0298631 = 2446
	fix0390181 = 3196
	fix0541196 = 4433
	fix0765367 = 6270
	fix0899976 = 7373
	fix1175876 = 9633
	fix1501321 = 12299
	fix1847759 = 15137
	fix1961571 = 16069
	fix2053120 = 16819
	fix2562915 = 20995
	fix3072711 = 25172
)

// Islow is libjpeg-turbo's jpeg_idct_islow: dequantize, two separable
// integer passes (columns into a workspace scaled by 2^PASS1_BITS, then rows),
// level shift by +128. Out-of-range results are clamped, as the x86 SIMD
// version Pillow's libjpeg-turbo runs does (its packs saturate; the C version
// would wrap values beyond +-384 through its range-limit table, which only
// corrupt streams reach).
func Islow(b, q *Block, dst []byte, stride int) {
	_ = dst[7*stride+7]
	islow(b, q, dst, stride)
}

// islowGo is Islow in Go: the reference the assembly versions are tested against and the fallback
// where they do not run.
func islowGo(b, q *Block, dst []byte, stride int) {
	// A block with no AC coefficient (most blocks of smooth areas) gives one value everywhere: both
	// passes then reduce exactly to (((dc*q)<<PASS1_BITS) + 16) >> 5.
	var ac int32
	for _, c := range b[1:] {
		ac |= c
	}
	if ac == 0 {
		v := clampSample(((b[0]*q[0])<<pass1Bits + 16) >> (pass1Bits + 3))
		row := [8]byte{v, v, v, v, v, v, v, v}
		for r := 0; r < 8; r++ {
			copy(dst[r*stride:r*stride+8], row[:])
		}
		return
	}
	var ws Block
	for c := 0; c < 8; c++ {
		if b[8+c]|b[16+c]|b[24+c]|b[32+c]|b[40+c]|b[48+c]|b[56+c] == 0 {
			dc := (b[c] * q[c]) << pass1Bits
			for r := 0; r < 8; r++ {
				ws[8*r+c] = dc
			}
			continue
		}
		z2 := b[16+c] * q[16+c]
		z3 := b[48+c] * q[48+c]
		z1 := (z2 + z3) * fix0541196
		tmp2 := z1 - z3*fix1847759
		tmp3 := z1 + z2*fix0765367
		z2 = b[c] * q[c]
		z3 = b[32+c] * q[32+c]
		tmp0 := (z2 + z3) << constBits
		tmp1 := (z2 - z3) << constBits
		tmp10 := tmp0 + tmp3
		tmp13 := tmp0 - tmp3
		tmp11 := tmp1 + tmp2
		tmp12 := tmp1 - tmp2

		tmp0 = b[56+c] * q[56+c]
		tmp1 = b[40+c] * q[40+c]
		tmp2 = b[24+c] * q[24+c]
		tmp3 = b[8+c] * q[8+c]
		tmp0, tmp1, tmp2, tmp3 = oddPart(tmp0, tmp1, tmp2, tmp3)

		const sh = constBits - pass1Bits
		const rnd = 1 << (sh - 1)
		ws[c] = (tmp10 + tmp3 + rnd) >> sh
		ws[56+c] = (tmp10 - tmp3 + rnd) >> sh
		ws[8+c] = (tmp11 + tmp2 + rnd) >> sh
		ws[48+c] = (tmp11 - tmp2 + rnd) >> sh
		ws[16+c] = (tmp12 + tmp1 + rnd) >> sh
		ws[40+c] = (tmp12 - tmp1 + rnd) >> sh
		ws[24+c] = (tmp13 + tmp0 + rnd) >> sh
		ws[32+c] = (tmp13 - tmp0 + rnd) >> sh
	}
	for r := 0; r < 8; r++ {
		w := ws[8*r : 8*r+8 : 8*r+8]
		out := dst[r*stride : r*stride+8 : r*stride+8]
		if w[1]|w[2]|w[3]|w[4]|w[5]|w[6]|w[7] == 0 {
			v := clampSample((w[0] + 16) >> (pass1Bits + 3))
			for i := range out {
				out[i] = v
			}
			continue
		}
		z2, z3 := w[2], w[6]
		z1 := (z2 + z3) * fix0541196
		tmp2 := z1 - z3*fix1847759
		tmp3 := z1 + z2*fix0765367
		tmp0 := (w[0] + w[4]) << constBits
		tmp1 := (w[0] - w[4]) << constBits
		tmp10 := tmp0 + tmp3
		tmp13 := tmp0 - tmp3
		tmp11 := tmp1 + tmp2
		tmp12 := tmp1 - tmp2
		tmp0, tmp1, tmp2, tmp3 = oddPart(w[7], w[5], w[3], w[1])

		const sh = constBits + pass1Bits + 3
		const rnd = 1 << (sh - 1)
		out[0] = clampSample((tmp10 + tmp3 + rnd) >> sh)
		out[7] = clampSample((tmp10 - tmp3 + rnd) >> sh)
		out[1] = clampSample((tmp11 + tmp2 + rnd) >> sh)
		out[6] = clampSample((tmp11 - tmp2 + rnd) >> sh)
		out[2] = clampSample((tmp12 + tmp1 + rnd) >> sh)
		out[5] = clampSample((tmp12 - tmp1 + rnd) >> sh)
		out[3] = clampSample((tmp13 + tmp0 + rnd) >> sh)
		out[4] = clampSample((tmp13 - tmp0 + rnd) >> sh)
	}
}

// oddPart is jidctint.c's odd part, shared by both passes: inputs are the
// coefficients 7, 5, 3, 1 of a column or row.
func oddPart(tmp0, tmp1, tmp2, tmp3 int32) (int32, int32, int32, int32) {
	z1 := tmp0 + tmp3
	z2 := tmp1 + tmp2
	z3 := tmp0 + tmp2
	z4 := tmp1 + tmp3
	z5 := (z3 + z4) * fix1175876
	tmp0 *= fix0298631
	tmp1 *= fix2053120
	tmp2 *= fix3072711
	tmp3 *= fix1501321
	z1 *= -fix0899976
	z2 *= -fix2562915
	z3 = z3*-fix1961571 + z5
	z4 = z4*-fix0390181 + z5
	return tmp0 + z1 + z3, tmp1 + z2 + z4, tmp2 + z2 + z3, tmp3 + z1 + z4
}

// clampSample level-shifts a descaled IDCT output by +128 and clamps it to a byte.
func clampSample(x int32) byte {
	x += 128
	if uint32(x) > 255 {
		if x < 0 {
			return 0
		}
		return 255
	}
	return byte(x)
}
