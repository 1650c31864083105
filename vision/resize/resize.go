package resize

import (
	"fmt"
	"math"
)

// Method names whose fixed-point arithmetic a resize reproduces.
type Method uint8

const (
	// Pillow is Pillow's Image.resize(size, BICUBIC) (Pillow 9.4's Resample.c): weights quantised to
	// 22 fractional bits.
	Pillow Method = iota + 1
	// Torch is torch's uint8 antialiased bicubic interpolation (torchvision's resize of a uint8 tensor
	// with antialias=True): weights quantised to int16 with the most fractional bits the pass's largest
	// weight allows, and the second lobe of the cubic evaluated in torch's order.
	Torch
)

func (m Method) String() string {
	switch m {
	case Pillow:
		return "pillow"
	case Torch:
		return "torch"
	}
	return fmt.Sprintf("resize.Method(%d)", uint8(m))
}

// pillowPrecision is Pillow's PRECISION_BITS (32 - 8 - 2): room for 8-bit pixels and negative lobes.
const pillowPrecision = 22

// torchMaxPrecision bounds torch's search for the int16 weights' fractional bits.
const torchMaxPrecision = 22

// Resizer resizes RGB images, keeping its weight tables and row buffers between calls so that a
// warmed Resizer allocates nothing. It is not safe for concurrent use; its zero value is ready.
//
// The passes stream: the vertical pass keeps only the rows its filter spans in a ring, and each is
// produced (horizontally resampled, or just repacked) when first needed — so the intermediate image
// never exists whole, it stays in cache, and rows no output reads are never computed (Pillow skips them
// too). Pixels travel between the passes packed ([lanes]).
type Resizer struct {
	horiz, vert weights
	raw         []float64
	row         lanes // one source row, packed, for the horizontal pass
	ring        lanes // the rows the vertical pass reads: vert.taps rows of the intermediate width
	acc         lanes // one output row's accumulators, for vertical filters wider than eight taps
}

// lanes holds pixels so that a tap costs two multiplications instead of three: red and blue share an
// int64 (red in the low 32 bits, blue in the high), green has its own int32. The sums stay exact: each
// channel's sum fits an int32 (the C code relies on the same), so the int64 sum is
// S_red + S_blue·2^32 without overflow, and [split] recovers both.
type lanes struct {
	rb []int64
	g  []int32
}

func (l *lanes) grow(n int) {
	l.rb = grow(l.rb, n)
	l.g = grow(l.g, n)
}

// pack fills rb and g from RGB bytes.
func pack(rb []int64, g []int32, in []uint8) {
	g = g[:len(rb)]
	for x := range rb {
		p := (*[3]uint8)(in[x*3:])
		rb[x] = int64(p[0]) | int64(p[2])<<32
		g[x] = int32(p[1])
	}
}

// split recovers the red and blue sums from their shared int64.
func split(rb int64) (r, b int32) {
	r = int32(uint32(rb))
	return r, int32((rb - int64(r)) >> 32)
}

// weights holds one pass's quantised filter: output i reads taps inputs from start[i] on, weighted by
// k[i*ksize : i*ksize+taps], and the sum is shifted right by prec. Every output has the same number
// of taps: spans cut short by an edge are padded with zero weights, which leaves the integer sums —
// and so the bytes — unchanged and lets the loops run a fixed, unrolled length.
type weights struct {
	start []int32
	k     []int32
	ksize int
	taps  int
	prec  uint
}

// RGB resizes src (srcW x srcH, three bytes a pixel, rows without padding) into dst (dstW x dstH)
// with m's arithmetic. dst must hold exactly dstW*dstH*3 bytes. Equal sizes copy.
func (r *Resizer) RGB(dst []uint8, dstW, dstH int, src []uint8, srcW, srcH int, m Method) error {
	if m != Pillow && m != Torch {
		return fmt.Errorf("resize: unknown method %d", uint8(m))
	}
	if srcW <= 0 || srcH <= 0 || dstW <= 0 || dstH <= 0 {
		return fmt.Errorf("resize: sizes must be positive, got %dx%d -> %dx%d", srcW, srcH, dstW, dstH)
	}
	if len(src) != srcW*srcH*3 || len(dst) != dstW*dstH*3 {
		return fmt.Errorf("resize: buffers of %d and %d bytes do not match %dx%d -> %dx%d RGB", len(src), len(dst), srcW, srcH, dstW, dstH)
	}
	needH, needV := srcW != dstW, srcH != dstH
	if !needH && !needV {
		copy(dst, src)
		return nil
	}
	if needH {
		r.raw = r.horiz.compute(srcW, dstW, m, r.raw)
		r.row.grow(srcW)
	}
	// produce writes intermediate row y (dstW wide) into rb and g.
	produce := func(rb []int64, g []int32, y int) {
		in := src[y*srcW*3 : (y+1)*srcW*3]
		if !needH {
			pack(rb, g, in)
			return
		}
		pack(r.row.rb, r.row.g, in)
		horizontalRow(rb, g, &r.row, &r.horiz)
	}
	if !needV {
		r.ring.grow(dstW)
		for y := range srcH {
			produce(r.ring.rb, r.ring.g, y)
			unpack(dst[y*dstW*3:(y+1)*dstW*3], r.ring.rb, r.ring.g)
		}
		return nil
	}
	r.raw = r.vert.compute(srcH, dstH, m, r.raw)
	r.ring.grow(r.vert.taps * dstW)
	if r.vert.taps > 8 {
		r.acc.grow(dstW)
	}
	vertical(dst, dstW, dstH, &r.vert, &r.ring, &r.acc, produce)
	return nil
}

// unpack writes packed pixels (already clipped to 0..255) as RGB bytes.
func unpack(out []uint8, rb []int64, g []int32) {
	g = g[:len(rb)]
	for x, v := range rb {
		red, blue := split(v)
		o := (*[3]uint8)(out[x*3:])
		o[0], o[1], o[2] = uint8(red), uint8(g[x]), uint8(blue)
	}
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// compute fills w for resampling in inputs to out outputs: Pillow's precompute_coeffs, which torch's
// _compute_indices_min_size_weights_aa repeats step for step, then each method's quantisation.
// raw is float64 scratch, returned for reuse.
func (w *weights) compute(in, out int, m Method, raw []float64) []float64 {
	scale := float64(in) / float64(out)
	filterscale := max(scale, 1.0)
	support := 2.0 * filterscale // bicubic support is 2 input pixels, widened when shrinking
	ksize := int(math.Ceil(support))*2 + 1
	filter := pillowCubic
	if m == Torch {
		filter = torchCubic
	}
	invscale := 1.0 / filterscale

	w.ksize = ksize
	w.taps = min(ksize, in)
	w.start = grow(w.start, out)
	w.k = grow(w.k, out*ksize)
	n := w.k[:out] // each span's length until the padding below; w.k is rewritten after it
	raw = grow(raw, out*ksize)
	wmax := 0.0
	for i := range out {
		center := (float64(i) + 0.5) * scale
		lo := max(int(center-support+0.5), 0) // int() truncates toward zero like C's cast
		hi := min(int(center+support+0.5), in)
		span := min(max(hi-lo, 0), ksize) // rounding can make the span one wider than ksize; torch clips it
		row := raw[i*ksize : (i+1)*ksize]
		total := 0.0
		for j := range span {
			v := filter((float64(j+lo) - center + 0.5) * invscale)
			row[j] = v
			total += v
		}
		if total != 0 {
			for j := range span {
				row[j] /= total
				wmax = max(wmax, row[j])
			}
		}
		clear(row[span:])
		w.start[i], n[i] = int32(lo), int32(span)
	}
	// Pad every span to w.taps inputs: move a span that would run past the last input left, its
	// weights right by as much, zeros around them.
	for i := range out {
		lo, span := int(w.start[i]), int(n[i])
		if shift := lo - min(lo, in-w.taps); shift > 0 {
			row := raw[i*ksize : (i+1)*ksize]
			copy(row[shift:shift+span], row[:span])
			clear(row[:shift])
			w.start[i] = int32(lo - shift)
		}
	}

	w.prec = pillowPrecision
	if m == Torch {
		// The most fractional bits for which the largest weight still fits int16 (torch's loop,
		// which stops one bit short of overflowing).
		p := uint(0)
		for ; p < torchMaxPrecision; p++ {
			if int(0.5+wmax*float64(int(1)<<(p+1))) >= 1<<15 {
				break
			}
		}
		w.prec = p
	}
	one := float64(int(1) << w.prec)
	for i, v := range raw {
		v *= one
		if v < 0 {
			w.k[i] = int32(-0.5 + v)
		} else {
			w.k[i] = int32(0.5 + v)
		}
	}
	return raw
}

// pillowCubic is Pillow's bicubic_filter (a = -0.5). Products are converted explicitly so that no
// compiler fuses them into FMAs, which would round differently from the C code.
func pillowCubic(x float64) float64 {
	const a = -0.5
	if x < 0 {
		x = -x
	}
	if x < 1 {
		return float64(float64(float64((a+2.0)*x)-(a+3.0))*x)*x + 1
	}
	if x < 2 {
		return float64(float64(float64(float64(x-5)*x)+8)*x-4) * a
	}
	return 0
}

// torchCubic is torch's HelperInterpCubic::aa_filter with a = -0.5: the first lobe as Pillow's, the
// second as cubic_convolution2, ((a*x - 5a)*x + 8a)*x - 4a, whose rounding differs from Pillow's.
func torchCubic(x float64) float64 {
	const a = -0.5
	x = math.Abs(x)
	if x < 1 {
		return float64(float64(float64((a+2)*x)-(a+3))*x)*x + 1
	}
	if x < 2 {
		return float64(float64(float64(float64(a*x)-5*a)*x)+8*a)*x - 4*a
	}
	return 0
}

// horizontalRow resamples one packed input row into a packed output row (values clipped to 0..255,
// as the uint8 image between Pillow's passes holds them). Five taps (every enlargement) are unrolled.
func horizontalRow(outRB []int64, outG []int32, in *lanes, w *weights) {
	half := int32(1) << (w.prec - 1)
	halfRB := int64(half) | int64(half)<<32
	prec := w.prec
	ksize, taps := w.ksize, w.taps
	kk := w.k
	start := w.start[:len(outRB)]
	outG = outG[:len(start)]
	if taps == 5 {
		for x, lo := range start {
			rb := (*[5]int64)(in.rb[lo:])
			g := (*[5]int32)(in.g[lo:])
			k := (*[5]int32)(kk[x*ksize:])
			srb := halfRB + rb[0]*int64(k[0]) + rb[1]*int64(k[1]) + rb[2]*int64(k[2]) + rb[3]*int64(k[3]) + rb[4]*int64(k[4])
			sg := half + g[0]*k[0] + g[1]*k[1] + g[2]*k[2] + g[3]*k[3] + g[4]*k[4]
			sr, sb := split(srb)
			outRB[x] = int64(clip8(sr, prec)) | int64(clip8(sb, prec))<<32
			outG[x] = int32(clip8(sg, prec))
		}
		return
	}
	for x, lo := range start {
		k := kk[x*ksize : x*ksize+taps]
		rb := in.rb[lo : int(lo)+taps]
		g := in.g[lo : int(lo)+taps]
		srb, sg := halfRB, half
		for j, kv := range k {
			srb += rb[j] * int64(kv)
			sg += g[j] * kv
		}
		sr, sb := split(srb)
		outRB[x] = int64(clip8(sr, prec)) | int64(clip8(sb, prec))<<32
		outG[x] = int32(clip8(sg, prec))
	}
}

// vertical writes dst's dstH rows (dstW wide), each from the taps intermediate rows its filter spans,
// kept in the ring (row i in slot i mod taps) and produced on first use. The spans' starts never
// decrease, so a row leaves the ring only when no later output needs it. Up to eight taps are summed
// in one pass over the row; wider filters add four rows per pass into acc. Rows beyond the filter
// are the span's first row with weight zero.
func vertical(dst []uint8, dstW, dstH int, w *weights, ring, acc *lanes, produce func(rb []int64, g []int32, y int)) {
	half := int32(1) << (w.prec - 1)
	halfRB := int64(half) | int64(half)<<32
	prec := w.prec
	ksize, taps := w.ksize, w.taps
	slot := func(i int) ([]int64, []int32) {
		s := (i % taps) * dstW
		return ring.rb[s : s+dstW], ring.g[s : s+dstW]
	}
	var kk [8]int64
	var rbs [8][]int64
	var gs [8][]int32
	// load fills kk, rbs and gs with m taps from tap j on, zero-weighted past the filter.
	load := func(lo int, k []int32, j, m int) {
		for i := range m {
			kk[i] = 0
			rbs[i], gs[i] = slot(lo)
			if j+i < len(k) {
				kk[i] = int64(k[j+i])
				rbs[i], gs[i] = slot(lo + j + i)
			}
		}
	}
	next := 0 // the next intermediate row to produce
	for y := range dstH {
		lo := int(w.start[y])
		k := w.k[y*ksize : y*ksize+taps]
		for ; next < lo+taps; next++ {
			if next >= lo {
				rb, g := slot(next)
				produce(rb, g, next)
			}
		}
		out := dst[y*dstW*3 : (y+1)*dstW*3]
		switch {
		case taps <= 5:
			load(lo, k, 0, 5)
			a0, a1, a2, a3, a4 := rbs[0][:dstW], rbs[1][:dstW], rbs[2][:dstW], rbs[3][:dstW], rbs[4][:dstW]
			g0, g1, g2, g3, g4 := gs[0][:dstW], gs[1][:dstW], gs[2][:dstW], gs[3][:dstW], gs[4][:dstW]
			K0, K1, K2, K3, K4 := kk[0], kk[1], kk[2], kk[3], kk[4]
			k0, k1, k2, k3, k4 := int32(K0), int32(K1), int32(K2), int32(K3), int32(K4)
			for x := range a0 {
				srb := halfRB + a0[x]*K0 + a1[x]*K1 + a2[x]*K2 + a3[x]*K3 + a4[x]*K4
				sg := half + g0[x]*k0 + g1[x]*k1 + g2[x]*k2 + g3[x]*k3 + g4[x]*k4
				sr, sb := split(srb)
				o := (*[3]uint8)(out[x*3:])
				o[0], o[1], o[2] = clip8(sr, prec), clip8(sg, prec), clip8(sb, prec)
			}
		case taps <= 8:
			load(lo, k, 0, 8)
			a0, a1, a2, a3 := rbs[0][:dstW], rbs[1][:dstW], rbs[2][:dstW], rbs[3][:dstW]
			a4, a5, a6, a7 := rbs[4][:dstW], rbs[5][:dstW], rbs[6][:dstW], rbs[7][:dstW]
			g0, g1, g2, g3 := gs[0][:dstW], gs[1][:dstW], gs[2][:dstW], gs[3][:dstW]
			g4, g5, g6, g7 := gs[4][:dstW], gs[5][:dstW], gs[6][:dstW], gs[7][:dstW]
			K := kk
			k := [8]int32{int32(K[0]), int32(K[1]), int32(K[2]), int32(K[3]), int32(K[4]), int32(K[5]), int32(K[6]), int32(K[7])}
			for x := range a0 {
				srb := halfRB + a0[x]*K[0] + a1[x]*K[1] + a2[x]*K[2] + a3[x]*K[3] + a4[x]*K[4] + a5[x]*K[5] + a6[x]*K[6] + a7[x]*K[7]
				sg := half + g0[x]*k[0] + g1[x]*k[1] + g2[x]*k[2] + g3[x]*k[3] + g4[x]*k[4] + g5[x]*k[5] + g6[x]*k[6] + g7[x]*k[7]
				sr, sb := split(srb)
				o := (*[3]uint8)(out[x*3:])
				o[0], o[1], o[2] = clip8(sr, prec), clip8(sg, prec), clip8(sb, prec)
			}
		default:
			arb, ag := acc.rb[:dstW], acc.g[:dstW]
			for x := range arb {
				arb[x], ag[x] = halfRB, half
			}
			for j := 0; j < taps; j += 4 {
				load(lo, k, j, 4)
				a0, a1, a2, a3 := rbs[0][:dstW], rbs[1][:dstW], rbs[2][:dstW], rbs[3][:dstW]
				g0, g1, g2, g3 := gs[0][:dstW], gs[1][:dstW], gs[2][:dstW], gs[3][:dstW]
				K0, K1, K2, K3 := kk[0], kk[1], kk[2], kk[3]
				k0, k1, k2, k3 := int32(K0), int32(K1), int32(K2), int32(K3)
				for x := range arb {
					arb[x] += a0[x]*K0 + a1[x]*K1 + a2[x]*K2 + a3[x]*K3
					ag[x] += g0[x]*k0 + g1[x]*k1 + g2[x]*k2 + g3[x]*k3
				}
			}
			for x, v := range arb {
				sr, sb := split(v)
				o := (*[3]uint8)(out[x*3:])
				o[0], o[1], o[2] = clip8(sr, prec), clip8(ag[x], prec), clip8(sb, prec)
			}
		}
	}
}

// clip8 is the rounding both kernels share: the sum already holds half a unit, so an arithmetic
// shift rounds it, and the result saturates to 0..255.
func clip8(s int32, prec uint) uint8 {
	return uint8(min(max(s>>prec, 0), 255))
}
