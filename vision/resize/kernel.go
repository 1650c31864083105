package resize

// The Go kernels: the arithmetic of both methods written once, channel by channel. They run where
// no vector kernel exists and are the reference the vector kernels are tested against.

// horizontal resamples one source row (RGB bytes, padded) into out (len(w.start) pixels).
func horizontal(out []uint8, in []uint8, w *weights) {
	half := int32(1) << (w.prec - 1)
	prec, taps, ksize := w.prec, w.taps, w.ksize
	out = out[:len(w.start)*3]
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
	for i := from; i < len(out); i++ {
		s := half
		for j, row := range rows {
			s += int32(row[i]) * k[j]
		}
		out[i] = clip8(s, prec)
	}
}
