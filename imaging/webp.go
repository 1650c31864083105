package imaging

import (
	"bytes"
	"encoding/binary"
	"image"

	"golang.org/x/image/webp"
)

// errWebPDecoder is Pillow's message when libwebp's WebPAnimDecoder cannot be created (any structural
// failure of the file).
var errWebPDecoder = &Error{msg: "could not create decoder object"}

// webpHeader walks the RIFF chunks: the size comes from VP8X's canvas or the first VP8/VP8L frame
// header; alpha (Pillow's RGBA mode) from VP8X's flag or VP8L's alpha_is_used bit; EXIF from its chunk.
func webpHeader(data []byte) (header, error) {
	// Pillow's _accept wants a frame chunk tag right after the RIFF header; from there on libwebp's
	// demuxer decides, and any failure of it is "could not create decoder object".
	if len(data) < 16 {
		return header{}, ErrUnidentified
	}
	switch string(data[12:16]) {
	case "VP8 ", "VP8X", "VP8L":
	default:
		return header{}, ErrUnidentified
	}
	if int64(binary.LittleEndian.Uint32(data[4:]))+8 > int64(len(data)) {
		return header{}, errWebPDecoder
	}
	h := header{format: WEBP, mode: "RGB", orientation: 1, decode: decodeWebP}
	var exif []byte
	found := false
	// frameW, frameH are the largest frame any VP8/VP8L header declares: the decoder allocates for the
	// frame, so the pixel limit must hold for it as well as for the VP8X canvas.
	frameW, frameH := 0, 0
	for p := 12; p+8 <= len(data); {
		n := int(binary.LittleEndian.Uint32(data[p+4:]))
		body := data[p+8:]
		if n < 0 || n > len(body) {
			body = body[:len(body):len(body)]
		} else {
			body = body[:n]
		}
		switch string(data[p : p+4]) {
		case "VP8X":
			if len(body) < 10 {
				return header{}, errWebPDecoder
			}
			if !found {
				h.width = 1 + int(uint32(body[4])|uint32(body[5])<<8|uint32(body[6])<<16)
				h.height = 1 + int(uint32(body[7])|uint32(body[8])<<8|uint32(body[9])<<16)
				if body[0]&0x10 != 0 {
					h.mode = "RGBA"
				}
				found = true
			}
		case "VP8 ":
			if len(body) < 10 || string(body[3:6]) != "\x9d\x01\x2a" {
				return header{}, errWebPDecoder
			}
			fw, fh := int(binary.LittleEndian.Uint16(body[6:])&0x3fff), int(binary.LittleEndian.Uint16(body[8:])&0x3fff)
			frameW, frameH = max(frameW, fw), max(frameH, fh)
			if !found {
				h.width, h.height = fw, fh
				found = true
			}
		case "VP8L":
			if len(body) < 5 || body[0] != 0x2f {
				return header{}, errWebPDecoder
			}
			b := binary.LittleEndian.Uint32(body[1:])
			fw, fh := 1+int(b&0x3fff), 1+int(b>>14&0x3fff)
			frameW, frameH = max(frameW, fw), max(frameH, fh)
			if !found {
				h.width, h.height = fw, fh
				if b>>28&1 != 0 {
					h.mode = "RGBA"
				}
				found = true
			}
		case "EXIF":
			if exif == nil {
				exif = body
			}
		}
		p += 8 + n + n&1
		if n < 0 || p < 0 {
			break
		}
	}
	if !found || h.width == 0 || h.height == 0 {
		return header{}, errWebPDecoder
	}
	if frameW > h.width || frameH > h.height {
		// libwebp refuses a frame larger than its canvas; checking it here also keeps the frame's
		// allocation within the pixel limit checked against the canvas.
		return header{}, errWebPDecoder
	}
	h.orientation = exifOrientation(exif)
	if h.mode == "RGBA" {
		h.decode = decodeWebPAlpha
	}
	return h, nil
}

func decodeWebP(data []byte, opt Options) (*RGB, error)      { return webpToRGB(data, opt, false) }
func decodeWebPAlpha(data []byte, opt Options) (*RGB, error) { return webpToRGB(data, opt, true) }

func webpToRGB(data []byte, opt Options, alpha bool) (*RGB, error) {
	m, err := webp.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, &Error{msg: errWebPDecoder.msg, err: err}
	}
	switch m := m.(type) {
	case *image.YCbCr:
		return vp8ToRGB(m, nil, opt.Background), nil
	case *image.NYCbCrA:
		if !alpha {
			return vp8ToRGB(&m.YCbCr, nil, opt.Background), nil
		}
		return vp8ToRGB(&m.YCbCr, m, opt.Background), nil
	case *image.NRGBA:
		if !alpha {
			// RGB mode: libwebp's alpha is ignored.
			out := &RGB{Width: m.Rect.Dx(), Height: m.Rect.Dy()}
			out.Pix = make([]byte, 3*out.Width*out.Height)
			for y := 0; y < out.Height; y++ {
				row := m.Pix[y*m.Stride:]
				for x := 0; x < out.Width; x++ {
					copy(out.Pix[3*(y*out.Width+x):3*(y*out.Width+x)+3], row[4*x:4*x+3])
				}
			}
			return out, nil
		}
	}
	return imageToRGB(m, opt.Background), nil
}

// vp8ToRGB converts VP8's 4:2:0 planes as libwebp 1.2.4 does for RGB(A) output: the "fancy" upsampler
// (dsp/upsampling.c UPSAMPLE_FUNC: weights 9/3/3/1 built from two diagonal averages) and VP8YuvToRgb's
// 14-bit fixed point (dsp/yuv.h). The chroma row pair for output row y is the nearer and the farther
// chroma row, clamped at the edges, which is how EmitFancyRGB mirrors the first and last rows.
func vp8ToRGB(m *image.YCbCr, a *image.NYCbCrA, bg [3]uint8) *RGB {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	out := &RGB{Width: w, Height: h, Pix: make([]byte, 3*w*h)}
	uvRows := (h + 1) / 2
	uvw := (w + 1) / 2
	u := make([]byte, w)
	v := make([]byte, w)
	var comp *compositor
	if a != nil {
		comp = newCompositor(bg)
	}
	for y := 0; y < h; y++ {
		nearRow := (y + 1) / 2
		if y%2 == 1 {
			nearRow = (y - 1) / 2
		}
		farRow := y/2 - 1
		if y%2 == 1 {
			farRow = (y + 1) / 2
		}
		farRow = min(max(farRow, 0), uvRows-1)
		ni, fi := nearRow*m.CStride, farRow*m.CStride
		upsampleChroma(u, m.Cb[ni:ni+uvw], m.Cb[fi:fi+uvw])
		upsampleChroma(v, m.Cr[ni:ni+uvw], m.Cr[fi:fi+uvw])
		ys := m.Y[y*m.YStride : y*m.YStride+w]
		o := out.Pix[3*y*w : 3*(y+1)*w]
		for x, yy := range ys {
			p := o[3*x : 3*x+3 : 3*x+3]
			p[0], p[1], p[2] = yuvToRGB(int32(yy), int32(u[x]), int32(v[x]))
		}
		if comp != nil {
			as := a.A[y*a.AStride : y*a.AStride+w]
			for x, av := range as {
				p := o[3*x : 3*x+3 : 3*x+3]
				comp.pixel(p, p[0], p[1], p[2], av)
			}
		}
	}
	return out
}

// upsampleChroma is one row of UPSAMPLE_FUNC for the output row nearer to chroma row near (libwebp's
// "top" row with tl/t = near, l/uv = far; the "bottom" row is the same with the rows swapped).
func upsampleChroma(out, near, far []byte) {
	n := len(out)
	out[0] = byte((3*uint32(near[0]) + uint32(far[0]) + 2) >> 2)
	last := (n - 1) >> 1
	tl, l := uint32(near[0]), uint32(far[0])
	for x := 1; x <= last; x++ {
		t, uv := uint32(near[x]), uint32(far[x])
		avg := tl + t + l + uv + 8
		diag12 := (avg + 2*(t+l)) >> 3
		diag03 := (avg + 2*(tl+uv)) >> 3
		out[2*x-1] = byte((diag12 + tl) >> 1)
		out[2*x] = byte((diag03 + t) >> 1)
		tl, l = t, uv
	}
	if n&1 == 0 {
		out[n-1] = byte((3*tl + l + 2) >> 2)
	}
}

// yuvToRGB is libwebp's VP8YuvToRgb (YUV_FIX2 = 6).
func yuvToRGB(y, u, v int32) (byte, byte, byte) {
	mulHi := func(a, c int32) int32 { return (a * c) >> 8 }
	clip := func(x int32) byte {
		if x&^((256<<6)-1) == 0 {
			return byte(x >> 6)
		}
		if x < 0 {
			return 0
		}
		return 255
	}
	yy := mulHi(y, 19077)
	return clip(yy + mulHi(v, 26149) - 14234),
		clip(yy - mulHi(u, 6419) - mulHi(v, 13320) + 8708),
		clip(yy + mulHi(u, 33050) - 17685)
}
