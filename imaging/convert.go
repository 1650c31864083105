package imaging

// Pillow's fixed-point helpers (libImaging/ImagingUtils.h).

// mulDiv255 is MULDIV255(a, b): a*b/255 rounded, without a division.
func mulDiv255(a, b int32) int32 {
	t := a*b + 128
	return ((t >> 8) + t) >> 8
}

func clip8(v int32) uint8 {
	if v <= 0 {
		return 0
	}
	if v >= 255 {
		return 255
	}
	return uint8(v)
}

func grayToRGB(g []byte) []byte {
	out := make([]byte, 3*len(g))
	for i, v := range g {
		o := out[3*i : 3*i+3 : 3*i+3]
		o[0], o[1], o[2] = v, v, v
	}
	return out
}

// compositor pastes non-premultiplied RGBA on a background colour with the alpha as mask, as
// vLLM's rgba_to_rgb does (Image.new("RGB", bg).paste(rgba, mask=alpha)): Paste.c paste_mask_L blends
// each channel with BLEND(a, bg, c) = DIV255(bg*(255-a) + c*a), DIV255(x) = (x+128 + ((x+128)>>8)) >> 8.
// A table per background channel holds bg*(255-a).
type compositor struct {
	bgTerm [3][256]int32
}

func newCompositor(bg [3]uint8) *compositor {
	c := &compositor{}
	for ch := 0; ch < 3; ch++ {
		for a := 0; a < 256; a++ {
			c.bgTerm[ch][a] = int32(bg[ch]) * int32(255-a)
		}
	}
	return c
}

func (c *compositor) blend(ch int, v, a uint8) uint8 {
	t := c.bgTerm[ch][a] + int32(v)*int32(a) + 128
	return uint8(((t >> 8) + t) >> 8)
}

// pixel writes one composited pixel.
func (c *compositor) pixel(o []byte, r, g, b, a uint8) {
	o[0] = c.blend(0, r, a)
	o[1] = c.blend(1, g, a)
	o[2] = c.blend(2, b, a)
}

// orient applies EXIF orientation like ImageOps.exif_transpose (Image.transpose with FLIP_LEFT_RIGHT,
// ROTATE_180, FLIP_TOP_BOTTOM, TRANSPOSE, ROTATE_270, TRANSVERSE, ROTATE_90 for orientations 2..8).
// Transposition moves whole pixels, so applying it after the colour conversion gives the same bytes.
func orient(img *RGB, o int) *RGB {
	if o < 2 || o > 8 {
		return img
	}
	w, h := img.Width, img.Height
	ow, oh := w, h
	if o >= 5 {
		ow, oh = h, w
	}
	out := &RGB{Width: ow, Height: oh, Pix: make([]byte, len(img.Pix))}
	for y := 0; y < h; y++ {
		src := img.Pix[3*y*w : 3*(y+1)*w]
		for x := 0; x < w; x++ {
			var dx, dy int
			switch o {
			case 2: // mirror horizontally
				dx, dy = w-1-x, y
			case 3: // rotate 180
				dx, dy = w-1-x, h-1-y
			case 4: // mirror vertically
				dx, dy = x, h-1-y
			case 5: // transpose
				dx, dy = y, x
			case 6: // rotate 90 clockwise (Pillow's ROTATE_270)
				dx, dy = h-1-y, x
			case 7: // transverse
				dx, dy = h-1-y, w-1-x
			case 8: // rotate 90 counter-clockwise (ROTATE_90)
				dx, dy = y, w-1-x
			}
			d := 3 * (dy*ow + dx)
			copy(out.Pix[d:d+3], src[3*x:3*x+3])
		}
	}
	return out
}
