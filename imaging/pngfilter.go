package imaging

// PNG row filters undone (PNG spec 9.2). dst may be src itself or start before it in the same buffer:
// each byte of src is read before the byte of dst that could overlap it is written. prev is the previous
// unfiltered row, nil for a pass's first row (all zero). bpp is the filter's byte step, max(1, bits/8).
func unfilter(ft byte, dst, src, prev []byte, bpp int) bool {
	dst = dst[:len(src)]
	switch ft {
	case 0:
		copy(dst, src)
	case 1:
		unfilterSub(dst, src, bpp)
	case 2:
		if prev == nil {
			copy(dst, src)
			break
		}
		prev = prev[:len(src)]
		for i, v := range src {
			dst[i] = v + prev[i]
		}
	case 3:
		if prev == nil {
			copy(dst[:bpp], src)
			for i := bpp; i < len(src); i++ {
				dst[i] = src[i] + dst[i-bpp]>>1
			}
			break
		}
		prev = prev[:len(src)]
		for i := 0; i < bpp && i < len(src); i++ {
			dst[i] = src[i] + prev[i]>>1
		}
		for i := bpp; i < len(src); i++ {
			dst[i] = src[i] + uint8((int(dst[i-bpp])+int(prev[i]))>>1)
		}
	case 4:
		if prev == nil { // Paeth over a zero row predicts the left byte: Sub
			unfilterSub(dst, src, bpp)
			break
		}
		switch bpp {
		case 3:
			unfilterPaeth3(dst, src, prev[:len(src)])
		case 4:
			unfilterPaeth4(dst, src, prev[:len(src)])
		default:
			unfilterPaeth(dst, src, prev[:len(src)], bpp)
		}
	default:
		return false // image/png: "bad filter type"
	}
	return true
}

func unfilterSub(dst, src []byte, bpp int) {
	copy(dst[:min(bpp, len(src))], src)
	for i := bpp; i < len(src); i++ {
		dst[i] = src[i] + dst[i-bpp]
	}
}

// paeth is the Paeth predictor of left a, up b and upper-left c, with the spec's tie order (a, b, c),
// written so the compiler can use conditional moves.
func paeth(a, b, c int) int {
	pa, pb := b-c, a-c
	pc := pa + pb
	pa = (pa ^ pa>>63) - pa>>63
	pb = (pb ^ pb>>63) - pb>>63
	pc = (pc ^ pc>>63) - pc>>63
	if pb < pa {
		a, pa = b, pb
	}
	if pc < pa {
		a = c
	}
	return a
}

func unfilterPaeth(dst, src, prev []byte, bpp int) {
	for i := 0; i < bpp && i < len(src); i++ {
		dst[i] = src[i] + prev[i] // a = c = 0: predicts b
	}
	for i := bpp; i < len(src); i++ {
		dst[i] = src[i] + uint8(paeth(int(dst[i-bpp]), int(prev[i]), int(prev[i-bpp])))
	}
}

// unfilterPaeth3 and unfilterPaeth4 keep the left and upper-left pixels in registers (8-bit RGB and RGBA,
// the common screenshots).
func unfilterPaeth3(dst, src, prev []byte) {
	var a0, a1, a2, c0, c1, c2 int
	for i := 0; i+3 <= len(src); i += 3 {
		s, b, d := src[i:i+3:i+3], prev[i:i+3:i+3], dst[i:i+3:i+3]
		b0, b1, b2 := int(b[0]), int(b[1]), int(b[2])
		a0 = int(s[0] + uint8(paeth(a0, b0, c0)))
		a1 = int(s[1] + uint8(paeth(a1, b1, c1)))
		a2 = int(s[2] + uint8(paeth(a2, b2, c2)))
		d[0], d[1], d[2] = uint8(a0), uint8(a1), uint8(a2)
		c0, c1, c2 = b0, b1, b2
	}
}

func unfilterPaeth4(dst, src, prev []byte) {
	var a0, a1, a2, a3, c0, c1, c2, c3 int
	for i := 0; i+4 <= len(src); i += 4 {
		s, b, d := src[i:i+4:i+4], prev[i:i+4:i+4], dst[i:i+4:i+4]
		b0, b1, b2, b3 := int(b[0]), int(b[1]), int(b[2]), int(b[3])
		a0 = int(s[0] + uint8(paeth(a0, b0, c0)))
		a1 = int(s[1] + uint8(paeth(a1, b1, c1)))
		a2 = int(s[2] + uint8(paeth(a2, b2, c2)))
		a3 = int(s[3] + uint8(paeth(a3, b3, c3)))
		d[0], d[1], d[2], d[3] = uint8(a0), uint8(a1), uint8(a2), uint8(a3)
		c0, c1, c2, c3 = b0, b1, b2, b3
	}
}
