package imaging

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"golang.org/x/image/bmp"
)

// bmpHeader reads the BITMAPFILEHEADER and the info header's size fields (Pillow's BmpImagePlugin:
// 12-byte OS/2 headers carry 16-bit sizes, the others signed 32-bit with a negative height for
// top-down rows).
func bmpHeader(data []byte) (header, error) {
	if len(data) < 18 {
		return header{}, ErrUnidentified
	}
	var w, h int
	// Pillow reads the info header with _safe_read: shorter than its declared size is a truncated read.
	if n := int64(binary.LittleEndian.Uint32(data[14:])); n >= 4 && int64(len(data)) < 14+n {
		return header{}, truncatedRead(nil)
	}
	switch n := binary.LittleEndian.Uint32(data[14:]); {
	case n == 12:
		w, h = int(binary.LittleEndian.Uint16(data[18:])), int(binary.LittleEndian.Uint16(data[20:]))
	case n >= 40 && len(data) >= 30:
		w = int(int32(binary.LittleEndian.Uint32(data[18:])))
		h = int(int32(binary.LittleEndian.Uint32(data[22:])))
		if h < 0 {
			h = -h
		}
	default:
		return header{}, ErrUnidentified
	}
	if w <= 0 || h <= 0 {
		return header{}, ErrUnidentified
	}
	mode := "RGB"
	if len(data) >= 30 && binary.LittleEndian.Uint16(data[28:]) <= 8 {
		mode = "P"
	}
	return header{format: BMP, mode: mode, width: w, height: h, orientation: 1, decode: decodeBMP}, nil
}

func decodeBMP(data []byte, opt Options) (*RGB, error) {
	data = padLastRow(data)
	m, err := bmp.Decode(bytes.NewReader(data))
	if err != nil {
		if n := bmpUnprocessed(data); n >= 0 {
			return nil, &Error{msg: fmt.Sprintf("image file is truncated (%d bytes not processed)", n), err: err}
		}
		return nil, decodeErr(err)
	}
	return imageToRGB(m, opt.Background), nil
}

// padLastRow restores a missing end of the last stored row's padding: Pillow's raw decoder stops once
// it has the pixels, x/image/bmp reads whole padded rows.
func padLastRow(data []byte) []byte {
	if len(data) < 30 || binary.LittleEndian.Uint32(data[14:]) < 40 {
		return data
	}
	off := int64(binary.LittleEndian.Uint32(data[10:]))
	w := int64(int32(binary.LittleEndian.Uint32(data[18:])))
	h := int64(int32(binary.LittleEndian.Uint32(data[22:])))
	bpp := int64(binary.LittleEndian.Uint16(data[28:]))
	if w <= 0 || h == 0 {
		return data
	}
	h = max(h, -h)
	stride := (w*bpp + 31) / 32 * 4
	missing := off + stride*h - int64(len(data))
	if missing <= 0 || missing > stride-(w*bpp+7)/8 {
		return data
	}
	return append(data[:len(data):len(data)], make([]byte, missing)...)
}

// bmpUnprocessed is what Pillow's raw decoder (RawDecode.c) leaves unconsumed of pixel data that ends
// early: it takes whole rows, each followed by its padding, and stops at the first incomplete one. -1
// when the pixel data is complete (the failure is elsewhere).
func bmpUnprocessed(data []byte) int {
	if len(data) < 30 || binary.LittleEndian.Uint32(data[14:]) < 40 {
		return -1
	}
	off := int64(binary.LittleEndian.Uint32(data[10:]))
	w := int64(int32(binary.LittleEndian.Uint32(data[18:])))
	h := int64(int32(binary.LittleEndian.Uint32(data[22:])))
	bpp := int64(binary.LittleEndian.Uint16(data[28:]))
	h = max(h, -h)
	if w <= 0 || h == 0 || bpp == 0 {
		return -1
	}
	line := (w*bpp + 7) / 8
	skip := (w*bpp+31)/32*4 - line
	rem := max(int64(len(data))-off, 0)
	for rows := int64(0); ; {
		if rem < line {
			return int(rem)
		}
		rem -= line
		if rows++; rows == h {
			return -1
		}
		if rem < skip {
			return int(rem)
		}
		rem -= skip
	}
}
