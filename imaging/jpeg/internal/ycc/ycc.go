// Package ycc is libjpeg-turbo's YCbCr->RGB and YCCK->CMYK colour conversion (jdcolor.c), exact to
// the sample: Go row converters and, on amd64 with AVX2, an assembly ToRGB computing the same
// fixed-point formulas eight pixels at a time, tested identical to the Go version.
package ycc

// jdcolor.c build_ycc_rgb_table: SCALEBITS 16, FIX(x) = round(x * 2^16), tables indexed by the chroma
// sample (x = sample - 128). Cr->R and Cb->B are pre-rounded; the two green terms are summed, then
// rounded by the ONE_HALF folded into cbG.
const (
	scaleBits = 16
	oneHalf   = 1 << (scaleBits - 1)
)

var crR, cbB, crG, cbG = yccTables()

func yccTables() (crR, cbB, crG, cbG [256]int32) {
	fix := func(v float64) int32 { return int32(v*(1<<scaleBits) + 0.5) }
	for i := range 256 {
		x := int32(i - 128)
		crR[i] = (fix(1.40200)*x + oneHalf) >> scaleBits
		cbB[i] = (fix(1.77200)*x + oneHalf) >> scaleBits
		crG[i] = -fix(0.71414) * x
		cbG[i] = -fix(0.34414)*x + oneHalf
	}
	return
}

// rangeLimit is libjpeg's sample_range_limit: index v+rangeOffset gives v clamped to 0..255, for
// every v the colour converters can form (-(255+227) .. 255+227), without branches.
const rangeOffset = 512

var rangeLimit = func() (t [1024]byte) {
	for i := range t {
		t[i] = byte(min(max(i-rangeOffset, 0), 255))
	}
	return
}()

func clamp255(v int32) byte {
	return rangeLimit[uint32(v+rangeOffset)&1023]
}

// ToRGB is jdcolor.c ycc_rgb_convert for one row: out has 3*len(ys) bytes.
func ToRGB(out, ys, cbs, crs []byte) {
	n := toRGBAsm(out, ys, cbs, crs)
	toRGBGo(out[3*n:], ys[n:], cbs[n:], crs[n:])
}

// toRGBGo is ToRGB in Go: the reference of the assembly and the tail it leaves.
func toRGBGo(out, ys, cbs, crs []byte) {
	n := len(ys)
	cbs, crs, out = cbs[:n], crs[:n], out[:3*n]
	rl := &rangeLimit
	for x, yv := range ys {
		y := int32(yv) + rangeOffset
		cb, cr := cbs[x], crs[x]
		o := out[3*x : 3*x+3 : 3*x+3]
		o[0] = rl[uint32(y+crR[cr])&1023]
		o[1] = rl[uint32(y+(cbG[cb]+crG[cr])>>scaleBits)&1023]
		o[2] = rl[uint32(y+cbB[cb])&1023]
	}
}

// ToCMYK is jdcolor.c ycck_cmyk_convert for one row: the YCbCr part is converted to RGB and
// inverted, K passes through.
func ToCMYK(out, ys, cbs, crs, ks []byte) {
	cbs, crs, ks = cbs[:len(ys)], crs[:len(ys)], ks[:len(ys)]
	for x, yv := range ys {
		y := int32(yv)
		cb, cr := cbs[x], crs[x]
		o := out[4*x : 4*x+4 : 4*x+4]
		o[0] = clamp255(255 - (y + crR[cr]))
		o[1] = clamp255(255 - (y + (cbG[cb]+crG[cr])>>scaleBits))
		o[2] = clamp255(255 - (y + cbB[cb]))
		o[3] = ks[x]
	}
}
