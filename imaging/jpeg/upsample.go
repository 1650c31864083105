package jpeg

import "github.com/vrender/vrender/imaging/jpeg/internal/upsample"

// upsampler produces one component's full-resolution rows with libjpeg-turbo's jdsample.c method for
// its sampling ratio (jinit_upsampler, do_fancy_upsampling on, as Pillow leaves it):
//   - 1x1: the samples themselves;
//   - 2x1: h2v1_fancy_upsample when the component is more than 2 samples wide, else replication;
//   - 1x2: h1v2_fancy_upsample;
//   - 2x2: h2v2_fancy_upsample when more than 2 samples wide, else replication;
//   - any other integral ratio: int_upsample (replication).
//
// The fancy filters weight the nearer sample 3/4 and the farther 1/4 in each direction; at the image
// edges libjpeg uses the edge sample itself as the missing neighbour (its special first/last columns and
// its context rows duplicating the first and last real rows), which clamping the neighbour index gives.
type upsampler struct {
	plane          []byte
	stride         int
	dw, dh         int // the component's real (downsampled) size: libjpeg's downsampled_width/height
	hexp, vexp     int
	fancyH, fancyV bool
	width          int
	buf            []byte
	sums           []int16 // upsample.H2V2Fancy scratch
}

func newUpsampler(plane []byte, stride, w, h, hs, vs, hmax, vmax int) upsampler {
	u := upsampler{plane: plane, stride: stride, width: w, hexp: hmax / hs, vexp: vmax / vs}
	u.dw = (w*hs + hmax - 1) / hmax
	u.dh = (h*vs + vmax - 1) / vmax
	switch {
	case u.hexp == 2 && u.vexp == 1:
		u.fancyH = u.dw > 2
	case u.hexp == 1 && u.vexp == 2:
		u.fancyV = true
	case u.hexp == 2 && u.vexp == 2:
		u.fancyH = u.dw > 2
		u.fancyV = u.fancyH
	}
	if u.hexp != 1 || u.vexp != 1 {
		u.buf = make([]byte, u.dw*u.hexp)
	}
	if u.fancyH && u.fancyV {
		u.sums = make([]int16, u.dw+2)
	}
	return u
}

func (u *upsampler) srcRow(r int) []byte {
	r = min(max(r, 0), u.dh-1)
	return u.plane[r*u.stride : r*u.stride+u.dw]
}

// row returns output row y (at least width samples; valid until the next call).
func (u *upsampler) row(y int) []byte {
	if u.hexp == 1 && u.vexp == 1 {
		return u.plane[y*u.stride : y*u.stride+u.width]
	}
	in := y / u.vexp
	out := u.buf
	switch {
	case u.fancyH && u.fancyV:
		near := u.srcRow(in)
		far := u.srcRow(in + 1)
		if y%2 == 0 {
			far = u.srcRow(in - 1)
		}
		upsample.H2V2Fancy(out, near, far, u.sums)
	case u.fancyV:
		near := u.srcRow(in)
		far, bias := u.srcRow(in+1), int32(2)
		if y%2 == 0 {
			far, bias = u.srcRow(in-1), 1
		}
		far = far[:len(near)]
		for x, n := range near {
			out[x] = byte((3*int32(n) + int32(far[x]) + bias) >> 2)
		}
	case u.fancyH:
		h2v1Fancy(out, u.srcRow(in))
	default:
		src := u.srcRow(in)
		if u.hexp == 1 {
			return src
		}
		for x, s := range src {
			for k := 0; k < u.hexp; k++ {
				out[x*u.hexp+k] = s
			}
		}
	}
	return out
}

// h2v1Fancy is jdsample.c h2v1_fancy_upsample: 3/4 nearer + 1/4 farther, rounding biased 1 then 2.
func h2v1Fancy(out, in []byte) {
	n := len(in)
	out = out[:2*n]
	prev := int32(in[0])
	for i := 0; i < n; i++ {
		cur := int32(in[i])
		next := cur
		if i+1 < n {
			next = int32(in[i+1])
		}
		out[2*i] = byte((3*cur + prev + 1) >> 2)
		out[2*i+1] = byte((3*cur + next + 2) >> 2)
		prev = cur
	}
}
