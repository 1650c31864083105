package imaging

import (
	"encoding/binary"
	"hash/crc32"
)

// The fast PNG decoder: the chunks parsed in place, the IDAT stream inflated in one call into a buffer
// sized from the header (pnginflate_*.go), the rows unfiltered and converted straight to vLLM's RGB.
//
// It accepts only what Go's image/png accepts, with the same pixels (pngdecode_test.go proves it on the
// corpus, on generated files of every colour type, depth and interlace, and under a fuzz target): every
// chunk's CRC, image/png's chunk order and length rules, the Adler-32, the stream filling the image
// exactly and nothing after it. Anything else — a damaged, truncated or unusual file — goes to the
// image/png path (decodePNGStd), which gives the answer it always gave, so malformed files fail with the
// same message as before and the fast path needs no error mapping of its own.

// PNG colour types.
const (
	pngGray      = 0
	pngRGB       = 2
	pngPalette   = 3
	pngGrayAlpha = 4
	pngRGBA      = 6
)

// pngFile is a PNG whose chunks passed image/png's checks, up to IEND.
type pngFile struct {
	width, height    int
	depth, colorType uint8
	interlaced       bool
	plte             []byte   // the PLTE body of a palette image (3 bytes an entry)
	trns             []byte   // the tRNS body, nil when absent
	idat             [][]byte // the bodies of the first run of consecutive IDAT chunks
}

// Chunk types as big-endian words.
const (
	tagIHDR = 'I'<<24 | 'H'<<16 | 'D'<<8 | 'R'
	tagPLTE = 'P'<<24 | 'L'<<16 | 'T'<<8 | 'E'
	tagTRNS = 't'<<24 | 'R'<<16 | 'N'<<8 | 'S'
	tagIDAT = 'I'<<24 | 'D'<<16 | 'A'<<8 | 'T'
	tagIEND = 'I'<<24 | 'E'<<16 | 'N'<<8 | 'D'
)

// Stages of image/png's chunk-order check (its dsStart..dsSeenIDAT).
const (
	stageStart = iota
	stageIHDR
	stagePLTE
	stageTRNS
	stageIDAT
)

// parsePNG walks the chunks from the signature to IEND as image/png's parseChunk does and reports
// false wherever image/png would fail (or where this decoder does not follow it: IEND missing).
func parsePNG(data []byte) (pngFile, bool) {
	if len(data) < 8 || string(data[:8]) != "\x89PNG\r\n\x1a\n" {
		return pngFile{}, false
	}
	var f pngFile
	stage := stageStart
	const (
		runNone = iota // no IDAT yet
		runOpen        // inside the first run of IDAT chunks
		runDone        // later IDAT chunks are ignored, as image/png ignores them
	)
	run := runNone
	for p := 8; ; {
		if len(data)-p < 12 {
			return pngFile{}, false
		}
		n := binary.BigEndian.Uint32(data[p:])
		if n > 0x7fffffff || uint64(len(data)-p-12) < uint64(n) {
			return pngFile{}, false
		}
		end := p + 8 + int(n)
		if crc32.ChecksumIEEE(data[p+4:end]) != binary.BigEndian.Uint32(data[end:]) {
			return pngFile{}, false
		}
		tag := binary.BigEndian.Uint32(data[p+4:])
		body := data[p+8 : end]
		p = end + 4
		if tag != tagIDAT && run == runOpen {
			run = runDone
		}
		switch tag {
		case tagIHDR:
			if stage != stageStart || !f.parseIHDR(body) {
				return pngFile{}, false
			}
			stage = stageIHDR
		case tagPLTE:
			np := int(n / 3)
			if stage != stageIHDR || n%3 != 0 || np == 0 || np > 256 || np > 1<<f.depth {
				return pngFile{}, false
			}
			switch f.colorType {
			case pngPalette:
				f.plte = body
			case pngRGB, pngRGBA: // optional and ignored
			default:
				return pngFile{}, false
			}
			stage = stagePLTE
		case tagTRNS:
			switch f.colorType {
			case pngPalette:
				if stage != stagePLTE || n > 256 {
					return pngFile{}, false
				}
			case pngRGB:
				if (stage != stageIHDR && stage != stagePLTE) || n != 6 {
					return pngFile{}, false
				}
			case pngGray:
				if stage != stageIHDR || n != 2 {
					return pngFile{}, false
				}
			default:
				return pngFile{}, false
			}
			f.trns = body
			stage = stageTRNS
		case tagIDAT:
			if stage < stageIHDR || (stage == stageIHDR && f.colorType == pngPalette) {
				return pngFile{}, false
			}
			stage = stageIDAT
			if run != runDone {
				run = runOpen
				f.idat = append(f.idat, body)
			}
		case tagIEND:
			if stage != stageIDAT || n != 0 {
				return pngFile{}, false
			}
			return f, true
		}
	}
}

// parseIHDR keeps what image/png's parseIHDR accepts: methods 0, interlace 0 or 1 (Adam7), a positive
// int32 size and a valid depth for the colour type.
func (f *pngFile) parseIHDR(b []byte) bool {
	if len(b) != 13 || b[10] != 0 || b[11] != 0 || b[12] > 1 {
		return false
	}
	w, h := int32(binary.BigEndian.Uint32(b)), int32(binary.BigEndian.Uint32(b[4:]))
	if w <= 0 || h <= 0 {
		return false
	}
	d, ct := b[8], b[9]
	var ok bool
	switch ct {
	case pngGray:
		ok = d == 1 || d == 2 || d == 4 || d == 8 || d == 16
	case pngPalette:
		ok = d == 1 || d == 2 || d == 4 || d == 8
	case pngRGB, pngGrayAlpha, pngRGBA:
		ok = d == 8 || d == 16
	}
	f.width, f.height, f.depth, f.colorType, f.interlaced = int(w), int(h), d, ct, b[12] == 1
	return ok
}

// bitsPerPixel is the size of one pixel in the filtered stream.
func (f *pngFile) bitsPerPixel() int {
	channels := [...]int{pngGray: 1, pngRGB: 3, pngPalette: 1, pngGrayAlpha: 2, pngRGBA: 4}[f.colorType]
	return channels * int(f.depth)
}

// pngPass is one Adam7 pass (or the whole image): where its pixels land in the image.
type pngPass struct{ x0, y0, dx, dy int }

var adam7 = [7]pngPass{{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}}

// size is the pass's width and height in pixels (either may be 0: the pass is then absent).
func (p pngPass) size(w, h int) (int, int) {
	return (w - p.x0 + p.dx - 1) / p.dx, (h - p.y0 + p.dy - 1) / p.dy
}

// decodePNGFast is the fast path: nil when the file is not one this decoder vouches for.
func decodePNGFast(data []byte, bg [3]uint8) *RGB {
	f, ok := parsePNG(data)
	if !ok {
		return nil
	}
	return f.decode(bg)
}

// decode inflates and unfilters the image. The inflated size comes from the header (whose pixel
// count Load has already bounded), so a lying stream cannot make it allocate more.
func (f *pngFile) decode(bg [3]uint8) *RGB {
	w, h := f.width, f.height
	bits := f.bitsPerPixel()
	passes := []pngPass{{0, 0, 1, 1}}
	if f.interlaced {
		passes = adam7[:]
	}
	total := 0
	for _, p := range passes {
		pw, ph := p.size(w, h)
		if pw > 0 && ph > 0 {
			total += ph * (1 + (bits*pw+7)/8)
		}
	}
	raw := make([]byte, total)
	src := f.idat[0]
	if len(f.idat) > 1 {
		n := 0
		for _, b := range f.idat {
			n += len(b)
		}
		src = make([]byte, 0, n)
		for _, b := range f.idat {
			src = append(src, b...)
		}
	}
	if !inflateZlib(raw, src) {
		return nil
	}
	bpp := max(1, bits/8)
	if !f.interlaced && f.colorType == pngRGB && f.depth == 8 {
		// The unfiltered rows are the RGB image: unfilter each row onto the end of the one before, so the
		// rows close up over their filter bytes and the buffer becomes the image.
		rb := 3 * w
		var prev []byte
		for y := 0; y < h; y++ {
			s := raw[y*(rb+1) : (y+1)*(rb+1)]
			d := raw[y*rb : (y+1)*rb]
			if !unfilter(s[0], d, s[1:], prev, bpp) {
				return nil
			}
			prev = d
		}
		return &RGB{Width: w, Height: h, Pix: raw[: 3*w*h : 3*w*h]}
	}
	out := &RGB{Width: w, Height: h, Pix: make([]byte, 3*w*h)}
	conv := f.rowConverter(bg)
	var line []byte // one converted pass row, when the pass is scattered
	off := 0
	for _, p := range passes {
		pw, ph := p.size(w, h)
		if pw == 0 || ph == 0 {
			continue
		}
		rb := (bits*pw + 7) / 8
		if f.interlaced {
			line = make([]byte, 3*pw)
		}
		var prev []byte
		for y := 0; y < ph; y++ {
			s := raw[off : off+1+rb]
			off += 1 + rb
			cur := s[1:]
			if !unfilter(s[0], cur, cur, prev, bpp) {
				return nil
			}
			prev = cur
			oy := p.y0 + y*p.dy
			if !f.interlaced {
				conv(out.Pix[3*oy*w:3*(oy+1)*w], cur, pw)
				continue
			}
			conv(line, cur, pw)
			row := out.Pix[3*oy*w : 3*(oy+1)*w]
			for x := 0; x < pw; x++ {
				o := 3 * (p.x0 + x*p.dx)
				copy(row[o:o+3], line[3*x:3*x+3])
			}
		}
	}
	return out
}

// rowConverter gives the function that turns one unfiltered row of n pixels into RGB, as image/png's
// image type for the colour type went through imageToRGB (or decodePNGOpaque for truecolour):
//   - gray: the sample scaled to 8 bits (1, 2 and 4 bits by 0xff, 0x55, 0x11); 16-bit gray is Pillow's
//     mode I clamp (255 unless the high byte is 0); a tRNS gray makes the matching samples transparent
//     (image/png compares the tRNS low byte, times the scale, at 8 bits and less);
//   - truecolour: the (high) bytes as they are, tRNS ignored;
//   - palette: a 256-entry table, unused entries opaque black, composited when tRNS holds an alpha < 255;
//   - alpha types: the high bytes composited on bg.
func (f *pngFile) rowConverter(bg [3]uint8) func(dst, src []byte, n int) {
	c := newCompositor(bg)
	switch f.colorType {
	case pngGray:
		if f.depth == 16 {
			if f.trns == nil {
				return gray16Row
			}
			t0, t1 := f.trns[0], f.trns[1]
			return func(dst, src []byte, n int) {
				for x := 0; x < n; x++ {
					a := uint8(255)
					if src[2*x] == t0 && src[2*x+1] == t1 {
						a = 0
					}
					v := src[2*x]
					c.pixel(dst[3*x:3*x+3:3*x+3], v, v, v, a)
				}
			}
		}
		var lut [256][3]byte
		scale := [...]uint8{1: 0xff, 2: 0x55, 4: 0x11, 8: 1}[f.depth]
		for v := 0; v < 1<<f.depth; v++ {
			g := uint8(v) * scale
			a := uint8(255)
			if f.trns != nil && g == f.trns[1]*scale {
				a = 0
			}
			c.pixel(lut[v][:], g, g, g, a)
		}
		return indexedRow(f.depth, &lut)
	case pngPalette:
		var lut [256][3]byte
		alpha := make([]byte, 256)
		for i := range alpha {
			alpha[i] = 255
		}
		copy(alpha, f.trns)
		for i := 0; i < len(f.plte)/3; i++ {
			copy(lut[i][:], f.plte[3*i:3*i+3])
		}
		for _, a := range f.trns {
			if a != 255 {
				for i := range lut {
					l := lut[i]
					c.pixel(lut[i][:], l[0], l[1], l[2], alpha[i])
				}
				break
			}
		}
		return indexedRow(f.depth, &lut)
	case pngRGB:
		if f.depth == 8 {
			return func(dst, src []byte, n int) { copy(dst[:3*n], src) }
		}
		return func(dst, src []byte, n int) {
			for x := 0; x < n; x++ {
				dst[3*x], dst[3*x+1], dst[3*x+2] = src[6*x], src[6*x+2], src[6*x+4]
			}
		}
	case pngGrayAlpha:
		step := 2 * int(f.depth/8) // bytes a pixel; the high bytes are at 0 and step/2
		return func(dst, src []byte, n int) {
			for x := 0; x < n; x++ {
				v, a := src[step*x], src[step*x+step/2]
				c.pixel(dst[3*x:3*x+3:3*x+3], v, v, v, a)
			}
		}
	default: // pngRGBA
		if f.depth == 8 {
			// Screenshots are often RGBA with every pixel opaque: blending at alpha 255 gives the colour
			// itself, so those pixels are copied.
			return func(dst, src []byte, n int) {
				for x := 0; x < n; x++ {
					s, d := src[4*x:4*x+4:4*x+4], dst[3*x:3*x+3:3*x+3]
					if s[3] == 255 {
						d[0], d[1], d[2] = s[0], s[1], s[2]
						continue
					}
					c.pixel(d, s[0], s[1], s[2], s[3])
				}
			}
		}
		hi := 2 // 16 bits: the stride between high bytes
		return func(dst, src []byte, n int) {
			for x := 0; x < n; x++ {
				s := src[4*hi*x:]
				c.pixel(dst[3*x:3*x+3:3*x+3], s[0], s[hi], s[2*hi], s[3*hi])
			}
		}
	}
}

// gray16Row is Pillow's mode I converted to RGB (Convert.c i2rgb clamps at 255).
func gray16Row(dst, src []byte, n int) {
	for x := 0; x < n; x++ {
		v := uint8(255)
		if src[2*x] == 0 {
			v = src[2*x+1]
		}
		dst[3*x], dst[3*x+1], dst[3*x+2] = v, v, v
	}
}

// indexedRow maps samples of 1, 2, 4 or 8 bits (most significant first) through a colour table.
func indexedRow(depth uint8, lut *[256][3]byte) func(dst, src []byte, n int) {
	if depth == 8 {
		return func(dst, src []byte, n int) {
			dst = dst[:3*n]
			for x, v := range src[:n] {
				p := &lut[v]
				d := dst[3*x : 3*x+3 : 3*x+3]
				d[0], d[1], d[2] = p[0], p[1], p[2]
			}
		}
	}
	perByte := 8 / int(depth)
	mask := byte(1)<<depth - 1
	return func(dst, src []byte, n int) {
		for x := 0; x < n; x++ {
			shift := 8 - depth*uint8(x%perByte+1)
			p := &lut[src[x/perByte]>>shift&mask]
			dst[3*x], dst[3*x+1], dst[3*x+2] = p[0], p[1], p[2]
		}
	}
}
