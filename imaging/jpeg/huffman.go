// Copyright 2009 The Go Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package jpeg

import "encoding/binary"

// maxCodeLength is the maximum (inclusive) number of bits in a Huffman code.
const maxCodeLength = 16

// maxNCodes is the maximum (inclusive) number of codes in a Huffman tree.
const maxNCodes = 256

// lutSize is the log-2 size of the Huffman decoder's look-up table.
const lutSize = 8

// huffman is a Huffman decoder, specified in section C.
type huffman struct {
	// length is the number of codes in the tree.
	nCodes int32
	// lut is the look-up table for the next lutSize bits in the bit-stream.
	// The high 8 bits of the uint16 are the encoded value. The low 8 bits
	// are 1 plus the code length, or 0 if the value is too large to fit in
	// lutSize bits.
	lut [1 << lutSize]uint16
	// vals are the decoded values, sorted by their encoding.
	vals [maxNCodes]uint8
	// minCodes[i] is the minimum code of length i, or -1 if there are no
	// codes of that length.
	minCodes [maxCodeLength]int32
	// maxCodes[i] is the maximum code of length i, or -1 if there are no
	// codes of that length.
	maxCodes [maxCodeLength]int32
	// valsIndices[i] is the index into vals of minCodes[i].
	valsIndices [maxCodeLength]int32
	// fastAC decodes a whole AC coefficient from the next fastACBits bits
	// when its code and extra bits fit in them (stb_image's fast_ac): the
	// coefficient << 16 | run << 8 | bits used, or 0 for the general path.
	// It is derived from decode, so it cannot disagree with it.
	fastAC [1 << fastACBits]int32
}

// fastACBits is the look-ahead of huffman.fastAC: most AC coefficients of
// photos take at most nine bits, code and extra bits together.
const fastACBits = 9

// errShortHuffmanData means that an unexpected EOF occurred while decoding
// Huffman data.
var errShortHuffmanData = FormatError("short Huffman data")

// fillBits tops the accumulator up to at least 57 bits: stuffed FF00 pairs
// become FF, a marker is never consumed, and past a marker or the end of the
// data zero bits are fed in (counted in d.bits.fake), as libjpeg does.
func (d *decoder) fillBits() {
	if d.bits.fake == 0 && d.bits.n <= 56 && d.pos+8 <= len(d.data) {
		// The common case in one step: the next eight bytes hold no 0xFF
		// (SWAR zero-byte test of their complement), so as many of them as
		// fit are plain data bytes.
		w := binary.BigEndian.Uint64(d.data[d.pos:])
		if (^w-0x0101010101010101)&w&0x8080808080808080 == 0 {
			k := (64 - d.bits.n) / 8
			d.bits.a = d.bits.a<<uint32(8*k) | w>>uint32(64-8*k)
			d.bits.n += 8 * k
			d.pos += int(k)
			return
		}
	}
	for d.bits.n <= 56 {
		var c byte
		if d.bits.fake == 0 && d.pos < len(d.data) {
			c = d.data[d.pos]
			switch {
			case c != 0xff:
				d.pos++
			case d.pos+1 < len(d.data) && d.data[d.pos+1] == 0:
				d.pos += 2
			default:
				c = 0
				d.bits.fake = 8
				d.bits.eof = d.pos+1 >= len(d.data)
			}
		} else {
			if d.bits.fake == 0 {
				d.bits.eof = true
			}
			d.bits.fake += 8
		}
		d.bits.a = d.bits.a<<8 | uint64(c)
		d.bits.n += 8
	}
}

// overran reports whether the decoder has used bits that the file does not
// have. Zeros read past a marker are what libjpeg decodes too (it warns and
// goes on, and Pillow keeps the image); zeros read past the end of the file are
// a truncated image.
func (d *decoder) overran() error {
	if d.bits.n < d.bits.fake && d.bits.eof {
		return errShortHuffmanData
	}
	return nil
}

// receiveExtend is the composition of RECEIVE and EXTEND, specified in section
// F.2.2.1.
func (d *decoder) receiveExtend(t uint8) (int32, error) {
	if d.bits.n < int32(t) {
		d.fillBits()
	}
	d.bits.n -= int32(t)
	if d.consumed != nil {
		d.consumed.extra(t)
	}
	return extend(uint32(d.bits.a>>uint32(d.bits.n)), t), nil
}

// processDHT processes a Define Huffman Table marker, and initializes a huffman
// struct from its contents. Specified in section B.2.4.2.
func (d *decoder) processDHT(n int) error {
	for n > 0 {
		if n < 17 {
			return FormatError("DHT has wrong length")
		}
		if err := d.readFull(d.tmp[:17]); err != nil {
			return err
		}
		tc := d.tmp[0] >> 4
		if tc > maxTc {
			return FormatError("bad Tc value")
		}
		th := d.tmp[0] & 0x0f
		// The baseline th <= 1 restriction is specified in table B.5.
		if th > maxTh || (d.baseline && th > 1) {
			return FormatError("bad Th value")
		}
		h := &d.huff[tc][th]

		// Read nCodes and h.vals (and derive h.nCodes).
		// nCodes[i] is the number of codes with code length i.
		// h.nCodes is the total number of codes.
		h.nCodes = 0
		var nCodes [maxCodeLength]int32
		for i := range nCodes {
			nCodes[i] = int32(d.tmp[i+1])
			h.nCodes += nCodes[i]
		}
		if h.nCodes == 0 {
			return FormatError("Huffman table has zero length")
		}
		if h.nCodes > maxNCodes {
			return FormatError("Huffman table has excessive length")
		}
		n -= int(h.nCodes) + 17
		if n < 0 {
			return FormatError("DHT has wrong length")
		}
		if err := d.readFull(h.vals[:h.nCodes]); err != nil {
			return err
		}

		// Derive the look-up table.
		clear(h.lut[:])
		var x, code uint32
		for i := uint32(0); i < lutSize; i++ {
			code <<= 1
			for j := int32(0); j < nCodes[i]; j++ {
				// The codeLength is 1+i, so shift code by 8-(1+i) to
				// calculate the high bits for every 8-bit sequence
				// whose codeLength's high bits matches code.
				// The high 8 bits of lutValue are the encoded value.
				// The low 8 bits are 1 plus the codeLength.
				base := uint8(code << (7 - i))
				lutValue := uint16(h.vals[x])<<8 | uint16(2+i)
				for k := uint8(0); k < 1<<(7-i); k++ {
					h.lut[base|k] = lutValue
				}
				code++
				x++
			}
		}

		// Derive minCodes, maxCodes, and valsIndices.
		var c, index int32
		for i, n := range nCodes {
			if n == 0 {
				h.minCodes[i] = -1
				h.maxCodes[i] = -1
				h.valsIndices[i] = -1
			} else {
				h.minCodes[i] = c
				h.maxCodes[i] = c + n - 1
				h.valsIndices[i] = index
				c += n
				index += n
			}
			c <<= 1
		}
		h.deriveFastAC()
	}
	return nil
}

// deriveFastAC fills h.fastAC by running decode on every fastACBits-bit
// prefix: a code of l <= fastACBits bits depends on those l bits alone
// (decode looks at no more to find it), and a coefficient of s extra bits
// with l+s <= fastACBits is then fixed by the prefix too.
func (h *huffman) deriveFastAC() {
	for p := range uint32(1 << fastACBits) {
		h.fastAC[p] = 0
		sym, l, ok := h.decode(p << (maxCodeLength - fastACBits))
		run, size := int32(sym>>4), sym&0x0f
		if !ok || size == 0 || l+int32(size) > fastACBits {
			continue
		}
		rest := fastACBits - l - int32(size)
		v := extend(p>>uint32(rest), size)
		h.fastAC[p] = v<<16 | run<<8 | (l + int32(size))
	}
}

// decodeHuffman returns the next Huffman-coded value from the bit-stream,
// decoded according to h.
func (d *decoder) decodeHuffman(h *huffman) (uint8, error) {
	if h.nCodes == 0 {
		return 0, FormatError("uninitialized Huffman table")
	}
	if d.bits.n < maxCodeLength {
		d.fillBits()
	}
	sym, n, ok := h.decode(uint32(d.bits.a >> uint32(d.bits.n-maxCodeLength)))
	if !ok {
		d.bits.n -= maxCodeLength
		return 0, FormatError("bad Huffman code")
	}
	d.bits.n -= n
	if d.consumed != nil {
		d.consumed.huff(n)
	}
	return sym, nil
}

// decode returns the symbol whose code starts the low 16 bits of peek (the next bits of the stream,
// most significant first) and the code's length, or false when no code of up to 16 bits matches.
func (h *huffman) decode(peek uint32) (sym uint8, n int32, ok bool) {
	peek &= 1<<maxCodeLength - 1
	if v := h.lut[peek>>(maxCodeLength-lutSize)]; v != 0 {
		return uint8(v >> 8), int32(v&0xff) - 1, true
	}
	for i := range int32(maxCodeLength) {
		if code := int32(peek >> (maxCodeLength - 1 - i)); code <= h.maxCodes[i] {
			return h.vals[h.valsIndices[i]+code-h.minCodes[i]], i + 1, true
		}
	}
	return 0, 0, false
}

func (d *decoder) decodeBit() (bool, error) {
	if d.bits.n == 0 {
		d.fillBits()
	}
	d.bits.n--
	if d.consumed != nil {
		d.consumed.extra(1)
	}
	return d.bits.a>>uint32(d.bits.n)&1 != 0, nil
}

func (d *decoder) decodeBits(n int32) (uint32, error) {
	if d.bits.n < n {
		d.fillBits()
	}
	d.bits.n -= n
	if d.consumed != nil {
		d.consumed.extra(uint8(n))
	}
	return uint32(d.bits.a>>uint32(d.bits.n)) & (1<<uint32(n) - 1), nil
}
