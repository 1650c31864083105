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

// Resizer resizes RGB images, keeping its weight tables and intermediate image between calls so that
// a warmed Resizer allocates nothing. It is not safe for concurrent use; its zero value is ready.
type Resizer struct {
	horiz, vert weights
	tmp         []uint8 // the horizontally resized image (dstW x srcH) when both passes run
	acc         []int32 // one output row's accumulators in the vertical pass
	raw         []float64
	lanes       lanes
}

// lanes is one input row of the horizontal pass repacked so that a tap costs two multiplications
// instead of three: red and blue share an int64 (red in the low 32 bits, blue in the high), green
// has its own int32. The sums are exact: each channel's sum fits an int32 (the C code relies on the
// same), so the int64 sum is S_red + S_blue·2^32 with no overflow, and both are recovered from it.
type lanes struct {
	rb []int64
	g  []int32
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
	switch {
	case !needH && !needV:
		copy(dst, src)
	case needH && !needV:
		r.raw = r.horiz.compute(srcW, dstW, m, r.raw)
		horizontal(dst, src, srcW, dstW, srcH, &r.horiz, &r.lanes)
	case !needH && needV:
		r.raw = r.vert.compute(srcH, dstH, m, r.raw)
		r.acc = grow(r.acc, dstW*3)
		vertical(dst, src, dstW, dstH, &r.vert, r.acc)
	default:
		r.raw = r.horiz.compute(srcW, dstW, m, r.raw)
		r.raw = r.vert.compute(srcH, dstH, m, r.raw)
		r.tmp = grow(r.tmp, dstW*srcH*3)
		horizontal(r.tmp, src, srcW, dstW, srcH, &r.horiz, &r.lanes)
		r.acc = grow(r.acc, dstW*3)
		vertical(dst, r.tmp, dstW, dstH, &r.vert, r.acc)
	}
	return nil
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

// horizontal resamples every row of src (srcW wide, h rows) into dst (dstW wide).
func horizontal(dst, src []uint8, srcW, dstW, h int, w *weights, l *lanes) {
	l.rb = grow(l.rb, srcW)
	l.g = grow(l.g, srcW)
	for y := range h {
		in := src[y*srcW*3 : (y+1)*srcW*3]
		rb, g := l.rb[:srcW], l.g[:srcW]
		for x := range rb {
			p := (*[3]uint8)(in[x*3:])
			rb[x] = int64(p[0]) | int64(p[2])<<32
			g[x] = int32(p[1])
		}
		horizontalRow(dst[y*dstW*3:(y+1)*dstW*3], l, w)
	}
}

// horizontalRow is one row of the horizontal pass, apart so that its sums stay in registers. Five
// taps (every enlargement) are unrolled.
func horizontalRow(out []uint8, l *lanes, w *weights) {
	half := int32(1) << (w.prec - 1)
	halfRB := int64(half) | int64(half)<<32
	prec := w.prec
	ksize, taps := w.ksize, w.taps
	kk := w.k
	start := w.start[:len(out)/3]
	if taps == 5 {
		for x, lo := range start {
			rb := (*[5]int64)(l.rb[lo:])
			g := (*[5]int32)(l.g[lo:])
			k := (*[5]int32)(kk[x*ksize:])
			srb := halfRB + rb[0]*int64(k[0]) + rb[1]*int64(k[1]) + rb[2]*int64(k[2]) + rb[3]*int64(k[3]) + rb[4]*int64(k[4])
			sg := half + g[0]*k[0] + g[1]*k[1] + g[2]*k[2] + g[3]*k[3] + g[4]*k[4]
			sr := int32(uint32(srb))
			sb := int32((srb - int64(sr)) >> 32)
			o := (*[3]uint8)(out[x*3:])
			o[0], o[1], o[2] = clip8(sr, prec), clip8(sg, prec), clip8(sb, prec)
		}
		return
	}
	for x, lo := range start {
		k := kk[x*ksize : x*ksize+taps]
		rb := l.rb[lo : int(lo)+taps]
		g := l.g[lo : int(lo)+taps]
		srb, sg := halfRB, half
		for j, kv := range k {
			srb += rb[j] * int64(kv)
			sg += g[j] * kv
		}
		sr := int32(uint32(srb))
		sb := int32((srb - int64(sr)) >> 32)
		o := (*[3]uint8)(out[x*3:])
		o[0], o[1], o[2] = clip8(sr, prec), clip8(sg, prec), clip8(sb, prec)
	}
}

// vertical resamples src (dstW wide) into dst's dstH rows, a whole output row at a time so that
// every input row is read sequentially. Up to eight taps (every enlargement and reductions up to 1.5x)
// are summed in one pass without accumulators; wider filters add four rows per pass into acc. Rows
// beyond the filter are row lo with weight zero.
func vertical(dst, src []uint8, dstW, dstH int, w *weights, acc []int32) {
	half := int32(1) << (w.prec - 1)
	prec := w.prec
	ksize, taps := w.ksize, w.taps
	rowLen := dstW * 3
	acc = acc[:rowLen]
	var kk [8]int32
	var rows [8][]uint8
	// load fills kk and rows with the n taps from j on, padded to len(kk) or m.
	load := func(lo int, k []int32, j, m int) {
		for i := range m {
			kk[i], rows[i] = 0, src[lo*rowLen:(lo+1)*rowLen]
			if j+i < len(k) {
				kk[i], rows[i] = k[j+i], src[(lo+j+i)*rowLen:(lo+j+i+1)*rowLen]
			}
		}
	}
	for y := range dstH {
		lo := int(w.start[y])
		k := w.k[y*ksize : y*ksize+taps]
		out := dst[y*rowLen : (y+1)*rowLen][:rowLen]
		switch {
		case taps <= 5:
			load(lo, k, 0, 5)
			r0, r1, r2, r3, r4 := rows[0][:rowLen], rows[1][:rowLen], rows[2][:rowLen], rows[3][:rowLen], rows[4][:rowLen]
			k0, k1, k2, k3, k4 := kk[0], kk[1], kk[2], kk[3], kk[4]
			for i := range out {
				s := half + int32(r0[i])*k0 + int32(r1[i])*k1 + int32(r2[i])*k2 + int32(r3[i])*k3 + int32(r4[i])*k4
				out[i] = clip8(s, prec)
			}
		case taps <= 8:
			load(lo, k, 0, 8)
			r0, r1, r2, r3 := rows[0][:rowLen], rows[1][:rowLen], rows[2][:rowLen], rows[3][:rowLen]
			r4, r5, r6, r7 := rows[4][:rowLen], rows[5][:rowLen], rows[6][:rowLen], rows[7][:rowLen]
			for i := range out {
				s := half + int32(r0[i])*kk[0] + int32(r1[i])*kk[1] + int32(r2[i])*kk[2] + int32(r3[i])*kk[3] +
					int32(r4[i])*kk[4] + int32(r5[i])*kk[5] + int32(r6[i])*kk[6] + int32(r7[i])*kk[7]
				out[i] = clip8(s, prec)
			}
		default:
			for i := range acc {
				acc[i] = half
			}
			for j := 0; j < taps; j += 4 {
				load(lo, k, j, 4)
				r0, r1, r2, r3 := rows[0][:rowLen], rows[1][:rowLen], rows[2][:rowLen], rows[3][:rowLen]
				k0, k1, k2, k3 := kk[0], kk[1], kk[2], kk[3]
				for i := range acc {
					acc[i] += int32(r0[i])*k0 + int32(r1[i])*k1 + int32(r2[i])*k2 + int32(r3[i])*k3
				}
			}
			for i, s := range acc {
				out[i] = clip8(s, prec)
			}
		}
	}
}

// clip8 is the rounding both kernels share: the sum already holds half a unit, so an arithmetic
// shift rounds it, and the result saturates to 0..255.
func clip8(s int32, prec uint) uint8 {
	return uint8(min(max(s>>prec, 0), 255))
}
