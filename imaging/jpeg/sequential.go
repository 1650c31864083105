package jpeg

// decodeSequential decodes one block of a sequential scan (all 64 coefficients, no successive
// approximation) with the bit accumulator held in locals and topped up to at least 32 bits once per
// code, so that the code (at most 16 bits) and its extra bits (at most 15) need no further checks.
// It decodes exactly what processSOS's general loop decodes (the same symbols, errors and EOB runs),
// which the differential tests check over whole files; the consumption replay keeps the general loop.
func (d *decoder) decodeSequential(b *block, dcH, acH *huffman, dc *int32) error {
	if dcH.nCodes == 0 {
		return FormatError("uninitialized Huffman table")
	}
	a, n := d.bits.a, d.bits.n
	if n < 32 {
		d.fillBits()
		a, n = d.bits.a, d.bits.n
	}
	sym, l, ok := dcH.decode(uint32(a >> uint32(n-maxCodeLength)))
	if !ok {
		d.bits.n = n - maxCodeLength
		return FormatError("bad Huffman code")
	}
	n -= l
	if sym > 16 {
		d.bits.n = n
		return UnsupportedError("excessive DC component")
	}
	n -= int32(sym)
	*dc += extend(uint32(a>>uint32(n)), sym)
	b[0] = *dc
	if acH.nCodes == 0 {
		d.bits.n = n
		return FormatError("uninitialized Huffman table")
	}
	for zig := int32(1); zig < blockSize; zig++ {
		if n < 32 {
			d.bits.a, d.bits.n = a, n
			d.fillBits()
			a, n = d.bits.a, d.bits.n
		}
		if e := acH.fastAC[(a>>uint32(n-fastACBits))&(1<<fastACBits-1)]; e != 0 {
			// A whole coefficient in one look-up, unless its run leaves the
			// block: that case consumes the code alone, as below.
			if z := zig + (e>>8)&0x0f; z < blockSize {
				zig = z
				n -= e & 0xff
				b[unzig[zig]] = e >> 16
				continue
			}
		}
		sym, l, ok := acH.decode(uint32(a >> uint32(n-maxCodeLength)))
		if !ok {
			d.bits.a, d.bits.n = a, n-maxCodeLength
			return FormatError("bad Huffman code")
		}
		n -= l
		run, size := sym>>4, sym&0x0f
		if size != 0 {
			zig += int32(run)
			if zig >= blockSize {
				break
			}
			n -= int32(size)
			b[unzig[zig]] = extend(uint32(a>>uint32(n)), size)
			continue
		}
		if run != 0x0f {
			eob := uint16(1) << run
			if run != 0 {
				n -= int32(run)
				eob |= uint16(a>>uint32(n)) & (1<<run - 1)
			}
			d.eobRun = eob - 1
			break
		}
		zig += 0x0f
	}
	d.bits.a, d.bits.n = a, n
	return nil
}

// extend is EXTEND (section F.2.2.1) of the low t bits of v.
func extend(v uint32, t uint8) int32 {
	s := int32(1) << t
	x := int32(v) & (s - 1)
	if x < s>>1 {
		x += ((-1) << t) + 1
	}
	return x
}
