package imaging

import (
	"bytes"
	"encoding/binary"

	"golang.org/x/image/bmp"
)

// bmpHeader reads the BITMAPFILEHEADER and the info header's size fields (Pillow's BmpImagePlugin:
// 12-byte OS/2 headers carry 16-bit sizes, the others signed 32-bit with a negative height for
// top-down rows).
func bmpHeader(data []byte) (header, error) {
	if len(data) < 26 {
		return header{}, ErrUnidentified
	}
	var w, h int
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
	m, err := bmp.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, decodeErr(err)
	}
	return imageToRGB(m, opt.Background), nil
}
