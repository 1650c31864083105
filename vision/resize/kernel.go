package resize

// The Go kernels: the arithmetic of both methods written once, channel by channel. They run where
// no vector kernel exists and are the reference the vector kernels are tested against.

// horizontal resamples one source row (RGB bytes, padded) into out (len(w.start) pixels).
func horizontal(out []uint8, in []uint8, w *weights) {
	half := int32(1) << (w.prec - 1)
	prec, taps, ksize := w.prec, w.taps, w.ksize
	out = out[:len(w.start)*3]
	if taps == 4 { // every enlargement: unrolled
		for x, lo := range w.start {
			k := (*[4]int32)(w.k[x*ksize:])
			p := (*[12]uint8)(in[int(lo)*3:])
			sr := half + int32(p[0])*k[0] + int32(p[3])*k[1] + int32(p[6])*k[2] + int32(p[9])*k[3]
			sg := half + int32(p[1])*k[0] + int32(p[4])*k[1] + int32(p[7])*k[2] + int32(p[10])*k[3]
			sb := half + int32(p[2])*k[0] + int32(p[5])*k[1] + int32(p[8])*k[2] + int32(p[11])*k[3]
			o := (*[3]uint8)(out[x*3:])
			o[0], o[1], o[2] = clip8(sr, prec), clip8(sg, prec), clip8(sb, prec)
		}
		return
	}
	for x, lo := range w.start {
		k := w.k[x*ksize : x*ksize+taps]
		p := in[int(lo)*3 : (int(lo)+taps)*3]
		sr, sg, sb := half, half, half
		for j, kv := range k {
			q := (*[3]uint8)(p[j*3:])
			sr += int32(q[0]) * kv
			sg += int32(q[1]) * kv
			sb += int32(q[2]) * kv
		}
		o := (*[3]uint8)(out[x*3:])
		o[0], o[1], o[2] = clip8(sr, prec), clip8(sg, prec), clip8(sb, prec)
	}
}

// vertical writes bytes from on of one output row: byte i is the rows' bytes i weighted by k. The
// channels need no telling apart, every byte of a row is filtered alike.
func vertical(out []uint8, rows [][]uint8, k []int32, prec uint, from int) {
	half := int32(1) << (prec - 1)
	k = k[:len(rows)]
	if len(rows) == 4 { // every enlargement: unrolled
		n := len(out)
		r0, r1, r2, r3 := rows[0][:n], rows[1][:n], rows[2][:n], rows[3][:n]
		k0, k1, k2, k3 := k[0], k[1], k[2], k[3]
		for i := from; i < n; i++ {
			s := half + int32(r0[i])*k0 + int32(r1[i])*k1 + int32(r2[i])*k2 + int32(r3[i])*k3
			out[i] = clip8(s, prec)
		}
		return
	}
	for i := from; i < len(out); i++ {
		s := half
		for j, row := range rows {
			s += int32(row[i]) * k[j]
		}
		out[i] = clip8(s, prec)
	}
}
