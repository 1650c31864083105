package resize

import (
	"fmt"
	"math"
	"sync"
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
// produced (horizontally resampled, or read straight from the source) when first needed — so the
// intermediate image never exists whole, it stays in cache, and rows no output reads are never
// computed (Pillow skips them too). Rows are plain RGB bytes, the uint8 image between Pillow's passes.
//
// On amd64 with AVX2 both passes run vector kernels (kernel_amd64.s; kernel512_amd64.s for torch's
// weights on CPUs with AVX-512 VBMI and VNNI) that compute the same integer sums; the Go kernels (kernel.go) run elsewhere and are the reference the vector ones are tested
// against.
type Resizer struct {
	shared      *Tables // where the passes' tables come from when set (UseTables)
	horiz, vert *tables // the current resize's passes': own (below) or shared
	own         [2]tables
	raw         []float64
	row         []uint8   // one source row and rowPad zero bytes, for the horizontal kernels' over-reads
	ring        []uint8   // vert.taps intermediate rows, each rowPad bytes longer than the row
	slots       [][]uint8 // the row in each ring slot: the ring's memory, or a source row
	taps        [][]uint8 // one output row's input rows, in filter order
	generic     bool      // run the Go kernels even where vector ones exist (for the differential tests)
	noAVX512    bool      // run the AVX2 kernels even where AVX-512 ones exist (likewise)
}

// UseTables makes r take its weight tables from t (nil: its own), which any number of Resizers may
// share at once and which outlives them: a Resizer kept in a sync.Pool is dropped at every garbage
// collection, and with it the tables it computed.
func (r *Resizer) UseTables(t *Tables) { r.shared = t }

// rowPad is the slack after a row that the vector kernels may read (the horizontal one loads sixteen
// bytes for five pixels) or write (it stores four bytes for three).
const rowPad = 32

// weights holds one pass's quantised filter: output i reads taps inputs from start[i] on, weighted by
// k[i*ksize : i*ksize+taps], and the sum is shifted right by prec. Every output has the same number
// of taps, the widest span's (at most ksize, at most the inputs): narrower spans are padded with zero
// weights, which leaves the integer sums — and so the bytes — unchanged and lets the loops run a fixed
// length.
type weights struct {
	key   weightsKey // what the tables were computed for: the zero key, nothing yet
	start []int32
	k     []int32
	ksize int
	taps  int
	prec  uint
}

// RGB resizes src (srcW x srcH, three bytes a pixel, rows without padding) into dst (dstW x dstH)
// with m's arithmetic. dst must hold exactly dstW*dstH*3 bytes. Equal sizes copy.
func (r *Resizer) RGB(dst []uint8, dstW, dstH int, src []uint8, srcW, srcH int, m Method) error {
	if len(src) != srcW*srcH*3 {
		return fmt.Errorf("resize: buffers of %d and %d bytes do not match %dx%d -> %dx%d RGB", len(src), len(dst), srcW, srcH, dstW, dstH)
	}
	src = src[:len(src):len(src)]
	row := func(y int) ([]uint8, error) { return src[y*srcW*3 : (y+1)*srcW*3], nil }
	return r.resize(dst, dstW, dstH, row, true, srcW, srcH, m)
}

// RGBRows is RGB reading the source a row at a time, top to bottom: next returns the next row
// (srcW*3 bytes, valid until the next call), and an error from it stops the resize and is returned.
// Only the rows the filter spans are read: rows below the last one an output reads are left to the
// caller. A row with rowPad bytes of capacity past its end is read in place, others are copied first.
func (r *Resizer) RGBRows(dst []uint8, dstW, dstH int, next func() ([]uint8, error), srcW, srcH int, m Method) error {
	read := 0 // rows taken from next
	row := func(y int) ([]uint8, error) {
		for {
			in, err := next()
			if err != nil {
				return nil, err
			}
			if len(in) != srcW*3 {
				return nil, fmt.Errorf("resize: source row of %d bytes, want %d", len(in), srcW*3)
			}
			read++
			if read > y {
				return in, nil
			}
		}
	}
	return r.resize(dst, dstW, dstH, row, false, srcW, srcH, m)
}

// resize is RGB and RGBRows: row(y) gives source row y, for y increasing; stable says its memory
// outlives the resize (so the ring may hold it instead of a copy).
func (r *Resizer) resize(dst []uint8, dstW, dstH int, row func(y int) ([]uint8, error), stable bool, srcW, srcH int, m Method) error {
	if m != Pillow && m != Torch {
		return fmt.Errorf("resize: unknown method %d", uint8(m))
	}
	if srcW <= 0 || srcH <= 0 || dstW <= 0 || dstH <= 0 {
		return fmt.Errorf("resize: sizes must be positive, got %dx%d -> %dx%d", srcW, srcH, dstW, dstH)
	}
	if len(dst) != dstW*dstH*3 {
		return fmt.Errorf("resize: buffer of %d bytes does not match %dx%d -> %dx%d RGB", len(dst), srcW, srcH, dstW, dstH)
	}
	needH, needV := srcW != dstW, srcH != dstH
	vector := false
	var hw *weights
	var hv *hvec
	if needH {
		r.horiz = r.tables(0, tablesKey{w: weightsKey{in: srcW, out: dstW, m: m}, horiz: true, wide: !r.noAVX512})
		r.row = grow(r.row, srcW*3+rowPad)
		clear(r.row[srcW*3:])
		vector = !r.generic && r.horiz.vector
		hw, hv = &r.horiz.w, &r.horiz.hv
	}
	stride := dstW*3 + rowPad
	// produce returns intermediate row y (dstW wide), computing it into buf when it needs computing.
	produce := func(buf []uint8, y int) ([]uint8, error) {
		in, err := row(y)
		if err != nil {
			return nil, err
		}
		if !needH {
			if stable {
				return in, nil
			}
			return buf[:copy(buf, in)], nil
		}
		if vector && cap(in)-len(in) >= rowPad {
			// The kernel's reads past the row meet zero weights, so the bytes after it (the next
			// row's) serve as well as the padding's zeros: only rows without them need the copy.
			horizontalVector(buf, in[:len(in)+rowPad], hw, hv)
			return buf[:dstW*3], nil
		}
		copy(r.row, in)
		if vector {
			horizontalVector(buf, r.row, hw, hv)
		} else {
			horizontal(buf[:dstW*3], r.row, hw)
		}
		return buf[:dstW*3], nil
	}
	if !needV {
		r.ring = grow(r.ring, stride)
		for y := range srcH {
			out, err := produce(r.ring, y)
			if err != nil {
				return err
			}
			copy(dst[y*dstW*3:(y+1)*dstW*3], out)
		}
		return nil
	}
	r.vert = r.tables(1, tablesKey{w: weightsKey{in: srcH, out: dstH, m: m}})
	w := &r.vert.w
	r.ring = grow(r.ring, w.taps*stride)
	r.slots = grow(r.slots, w.taps)
	r.taps = grow(r.taps, w.taps)
	// Drop the references to the source when done so that a pooled Resizer does not keep the
	// caller's image alive.
	defer clear(r.slots)
	defer clear(r.taps)
	// The ring holds row i in slot i mod taps. The spans' starts never decrease, so a row leaves the
	// ring only when no later output needs it.
	next := 0 // the next intermediate row to produce
	for y := range dstH {
		lo := int(w.start[y])
		for ; next < lo+w.taps; next++ {
			if next >= lo {
				s := next % w.taps
				out, err := produce(r.ring[s*stride:(s+1)*stride], next)
				if err != nil {
					return err
				}
				r.slots[s] = out
			}
		}
		for j := range r.taps {
			r.taps[j] = r.slots[(lo+j)%w.taps]
		}
		out := dst[y*dstW*3 : (y+1)*dstW*3]
		k := w.k[y*w.ksize : y*w.ksize+w.taps]
		done := 0
		if !r.generic {
			done = verticalVector(out, r.taps, k, w.prec, !r.noAVX512)
		}
		vertical(out, r.taps, k, w.prec, done)
	}
	return nil
}

// weightsKey is what a pass's weights depend on.
type weightsKey struct {
	in, out int
	m       Method
}

// tablesKey is what a pass's tables depend on: its weights, and for the horizontal pass the vector
// kernel's tables, built with the AVX-512 kernel allowed (wide) or not.
type tablesKey struct {
	w           weightsKey
	horiz, wide bool
}

// tables are one pass's weights, and for the horizontal pass (vector set) the vector kernel's
// arrangement of them. Once in a Tables they are never written again.
type tables struct {
	key    tablesKey
	w      weights
	hv     hvec
	vector bool
}

// fill makes t hold key's tables, computing them unless it does already; raw is compute's scratch.
func (t *tables) fill(key tablesKey, raw []float64) []float64 {
	if t.key == key {
		return raw
	}
	t.key = tablesKey{} // until the tables below are whole
	raw = t.w.compute(key.w.in, key.w.out, key.w.m, raw)
	t.vector = key.horiz && t.hv.build(&t.w, key.wide)
	t.key = key
	return raw
}

// bytes is about how much memory t holds.
func (t *tables) bytes() int {
	return 4*(cap(t.w.start)+cap(t.w.k)) + t.hv.bytes()
}

// tables returns key's tables: shared ones, or r's own for pass (0 horizontal, 1 vertical).
func (r *Resizer) tables(pass int, key tablesKey) *tables {
	if r.shared != nil {
		var t *tables
		t, r.raw = r.shared.get(key, r.raw)
		return t
	}
	r.raw = r.own[pass].fill(key, r.raw)
	return &r.own[pass]
}

// Tables keeps the weight tables of the sizes most recently resized, for Resizers to share (Resizer.
// UseTables): a server resizing images of a few sizes computes them once, not once a Resizer. It holds
// at most a few entries and a few megabytes, and is safe for concurrent use.
type Tables struct {
	mu      sync.Mutex
	entries []*tables // most recently used first
	bytes   int       // their tables' memory
}

// The bounds of a Tables: entries (a horizontal and a vertical pass an image size and method), and
// their memory (a Qwen-size enlargement's tables are tens of kilobytes; a large reduction's, which
// has many taps, a few hundred). The newest entry is kept whatever its size.
const (
	maxTables      = 16
	maxTablesBytes = 4 << 20
)

// get returns key's tables, computing them (outside the lock: two callers may compute the same
// tables at once, and one copy is kept) when t lacks them.
func (t *Tables) get(key tablesKey, raw []float64) (*tables, []float64) {
	t.mu.Lock()
	if e := t.find(key); e != nil {
		t.mu.Unlock()
		return e, raw
	}
	t.mu.Unlock()
	e := new(tables)
	raw = e.fill(key, raw)
	t.mu.Lock()
	defer t.mu.Unlock()
	if found := t.find(key); found != nil {
		return found, raw
	}
	t.entries = append(t.entries, nil)
	copy(t.entries[1:], t.entries)
	t.entries[0] = e
	t.bytes += e.bytes()
	for len(t.entries) > 1 && (len(t.entries) > maxTables || t.bytes > maxTablesBytes) {
		last := len(t.entries) - 1
		t.bytes -= t.entries[last].bytes()
		t.entries[last] = nil
		t.entries = t.entries[:last]
	}
	return e, raw
}

// find returns key's entry, moved to the front, or nil. t.mu is held.
func (t *Tables) find(key tablesKey) *tables {
	for i, e := range t.entries {
		if e.key == key {
			copy(t.entries[1:i+1], t.entries[:i])
			t.entries[0] = e
			return e
		}
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
// A Resizer serving images of one size (a worker's usual load) computes its tables once: w is left as
// it is when it already holds in -> out for m.
func (w *weights) compute(in, out int, m Method, raw []float64) []float64 {
	key := weightsKey{in: in, out: out, m: m}
	if w.key == key {
		return raw
	}
	w.key = weightsKey{} // until the tables below are whole
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
	w.start = grow(w.start, out)
	w.k = grow(w.k, out*ksize)
	n := w.k[:out] // each span's length until the padding below; w.k is rewritten after it
	raw = grow(raw, out*ksize)
	wmax := 0.0
	// taps is the widest span, not ksize: ksize has room for one more input than spans cover (an
	// enlargement's spans are four inputs, its ksize five), and a tap whose weight is zero for every
	// output would be work for nothing.
	w.taps = 1
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
		w.taps = max(w.taps, span)
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
	w.key = key
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

// clip8 is the rounding both kernels share: the sum already holds half a unit, so an arithmetic
// shift rounds it, and the result saturates to 0..255.
func clip8(s int32, prec uint) uint8 {
	return uint8(min(max(s>>prec, 0), 255))
}
