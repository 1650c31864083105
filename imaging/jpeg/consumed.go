package jpeg

import "errors"

// consumption replays, for a sequential scan, how far libjpeg-turbo 2.1.5 has consumed the file when
// Pillow's decoder runs out of data: Pillow hands libjpeg the file in 65536-byte reads through a
// suspending source, libjpeg decodes whole MCUs (decode_mcu_fast while 512 bytes per block remain in
// the buffer, else decode_mcu_slow) and keeps only the state saved after the last complete MCU. Its
// bit buffer is refilled at fixed points (jdhuff.c: FILL_BIT_BUFFER_FAST adds 6 bytes when 16 bits or
// fewer are left; jpeg_fill_bit_buffer tops up to 57 bits and suspends when the buffer cannot), so the
// consumed position depends on the sequence of Huffman code lengths and extra-bit counts, which the
// decoder reports here. What Pillow prints is "image file is truncated (N bytes not processed)" with
// N = the file's length minus that position.
type consumption struct {
	data     []byte
	chunkEnd int
	pos      int  // next_input_byte after the last complete MCU
	bitsLeft int  // bits_left then
	marker   bool // unread_marker then
	blocks   int  // blocks_in_MCU of the scan
	restart  bool // the next MCU starts with process_restart
	events   []int8
	// unprocessed is N once the replay suspended at the end of the data; -1 before.
	unprocessed int
}

// errConsumptionDone stops the decoder once the replay has found where libjpeg suspends.
var errConsumptionDone = errors.New("jpeg: consumption replay finished")

const pillowReadSize = 65536

func newConsumption(data []byte) *consumption {
	return &consumption{data: data, unprocessed: -1}
}

// startScan positions the replay after a scan header at pos.
func (c *consumption) startScan(pos, blocks int) {
	c.pos, c.bitsLeft, c.marker, c.blocks, c.restart = pos, 0, false, blocks, false
	for c.chunkEnd < len(c.data) && c.chunkEnd <= pos {
		c.chunkEnd = min(c.chunkEnd+pillowReadSize, len(c.data))
	}
}

func (c *consumption) huff(codeLen int32) { c.events = append(c.events, int8(codeLen)) }

func (c *consumption) extra(n uint8) {
	if n > 0 {
		c.events = append(c.events, -int8(n))
	}
}

// mcuEnd replays the MCU's events from the saved state, reading more of the file as Pillow would
// after a suspension, and reports whether the replay suspended at the end of the data.
func (c *consumption) mcuEnd() bool {
	defer func() { c.events = c.events[:0] }()
	for {
		if c.run() {
			c.restart = false
			return false
		}
		if c.chunkEnd >= len(c.data) {
			c.unprocessed = len(c.data) - c.pos
			return true
		}
		c.chunkEnd = min(c.chunkEnd+pillowReadSize, len(c.data))
	}
}

// run decodes the buffered MCU from the saved state; false means it suspended.
func (c *consumption) run() bool {
	r := replay{c: c, pos: c.pos, bits: c.bitsLeft, marker: c.marker}
	if c.restart {
		if !r.readRestart() {
			return false
		}
	}
	if !r.marker && c.chunkEnd-r.pos >= 512*c.blocks && r.fast() {
		c.pos, c.bitsLeft, c.marker = r.pos, r.bits, r.marker
		return true
	}
	r2 := replay{c: c, pos: c.pos, bits: c.bitsLeft, marker: c.marker}
	if c.restart && !r2.readRestart() {
		return false
	}
	if !r2.slow() {
		return false
	}
	c.pos, c.bitsLeft, c.marker = r2.pos, r2.bits, r2.marker
	return true
}

type replay struct {
	c      *consumption
	pos    int
	bits   int
	marker bool
}

// readRestart is process_restart: the buffered bits are dropped and the RSTn marker is read (skipping
// whatever precedes it), unless the bit reader already met it.
func (r *replay) readRestart() bool {
	r.bits = 0
	if r.marker {
		r.marker = false
		return true
	}
	d := r.c.data
	for {
		for r.pos < r.c.chunkEnd && d[r.pos] != 0xff {
			r.pos++
		}
		for r.pos < r.c.chunkEnd && d[r.pos] == 0xff {
			r.pos++
		}
		if r.pos >= r.c.chunkEnd {
			return false
		}
		m := d[r.pos]
		r.pos++
		if m != 0 {
			return true
		}
	}
}

// fast is decode_mcu_fast; false when it met a marker (libjpeg then redoes the MCU on the slow path).
func (r *replay) fast() bool {
	d := r.c.data
	fill := func() bool {
		if r.bits > 16 {
			return true
		}
		for k := 0; k < 6; k++ {
			if r.pos+1 >= len(d) {
				return false
			}
			c0 := d[r.pos]
			r.pos++
			r.bits += 8
			if c0 == 0xff {
				if d[r.pos] != 0 {
					return false
				}
				r.pos++
			}
		}
		return true
	}
	for _, e := range r.c.events {
		if !fill() {
			return false
		}
		if e > 0 {
			r.bits -= int(e)
		} else {
			r.bits += int(e)
		}
	}
	return true
}

// slow is decode_mcu_slow with jpeg_fill_bit_buffer and jpeg_huff_decode; false when it suspended.
func (r *replay) slow() bool {
	for _, e := range r.c.events {
		if e < 0 {
			if n := int(-e); r.bits < n {
				if !r.fill(n) {
					return false
				}
			}
			r.bits += int(e)
			continue
		}
		n := int(e)
		if r.bits < 8 && !r.fill(0) {
			return false
		}
		nb := 9
		switch {
		case r.bits < 8:
			nb = 1
		case n <= 8:
			r.bits -= n
			continue
		}
		if r.bits < nb && !r.fill(nb) {
			return false
		}
		r.bits -= nb
		for k := nb; k < n; k++ {
			if r.bits < 1 && !r.fill(1) {
				return false
			}
			r.bits--
		}
	}
	return true
}

// fill is jpeg_fill_bit_buffer: up to 57 bits, suspending when the buffer runs out; after a marker,
// zero bits when the caller needs more than it has.
func (r *replay) fill(nbits int) bool {
	d := r.c.data
	if !r.marker {
		for r.bits < 57 {
			if r.pos >= r.c.chunkEnd {
				return false
			}
			c := d[r.pos]
			r.pos++
			if c == 0xff {
				for {
					if r.pos >= r.c.chunkEnd {
						return false
					}
					c = d[r.pos]
					r.pos++
					if c != 0xff {
						break
					}
				}
				if c != 0 {
					r.marker = true
					break
				}
			}
			r.bits += 8
		}
		if !r.marker {
			return true
		}
	}
	if nbits > r.bits {
		r.bits = 57
	}
	return true
}
