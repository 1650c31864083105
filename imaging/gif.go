package imaging

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/gif"
)

// gifHeader reads what Pillow's GifImagePlugin reads when it opens a file: the screen descriptor, the
// global palette and the blocks up to the first image descriptor with its local palette and LZW code
// size. Data ending before that leaves the file unidentified.
func gifHeader(data []byte) (header, error) {
	if len(data) < 13 {
		return header{}, ErrUnidentified
	}
	w, h := int(binary.LittleEndian.Uint16(data[6:])), int(binary.LittleEndian.Uint16(data[8:]))
	p := 13
	if data[10]&0x80 != 0 {
		p += 3 << (data[10]&7 + 1)
	}
	for {
		if p >= len(data) {
			return header{}, ErrUnidentified
		}
		switch data[p] {
		case 0x21: // extension: label, then sub-blocks up to a zero length
			p += 2
			for {
				if p >= len(data) {
					return header{}, ErrUnidentified
				}
				n := int(data[p])
				p += 1 + n
				if n == 0 {
					break
				}
			}
			continue
		case 0x2c: // image descriptor
			if p+10 > len(data) {
				return header{}, ErrUnidentified
			}
			flags := data[p+9]
			p += 10
			if flags&0x80 != 0 {
				p += 3 << (flags&7 + 1)
			}
			if p >= len(data) { // the LZW minimum code size
				return header{}, ErrUnidentified
			}
			lzwAt := p + 1
			decode := func(data []byte, opt Options) (*RGB, error) {
				img, err := decodeGIF(data, opt)
				if err != nil {
					if n := gifUnprocessed(data, lzwAt); n >= 0 {
						return nil, &Error{msg: fmt.Sprintf("image file is truncated (%d bytes not processed)", n), err: err}
					}
				}
				return img, err
			}
			return header{format: GIF, mode: "P", width: w, height: h, orientation: 1, decode: decode}, nil
		default:
			return header{}, ErrUnidentified
		}
	}
}

// decodeGIF gives the first frame as Pillow 9.4 does: a logical-screen-sized P image whose pixels
// outside the frame are the transparent index when there is one, else index 0.
func decodeGIF(data []byte, opt Options) (*RGB, error) {
	cfg, err := gif.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, truncated(err)
	}
	m, err := gif.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, truncated(err)
	}
	p, ok := m.(*image.Paletted)
	if !ok {
		return nil, broken(errors.New("gif: first frame is not paletted"))
	}
	fill := uint8(0)
	for i, c := range p.Palette {
		if _, _, _, a := c.RGBA(); a == 0 && i < 256 {
			fill = uint8(i)
			break
		}
	}
	screen := image.NewPaletted(image.Rect(0, 0, cfg.Width, cfg.Height), p.Palette)
	if fill != 0 {
		for i := range screen.Pix {
			screen.Pix[i] = fill
		}
	}
	r := p.Bounds().Intersect(screen.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		copy(screen.Pix[y*screen.Stride+r.Min.X:y*screen.Stride+r.Max.X], p.Pix[p.PixOffset(r.Min.X, y):p.PixOffset(r.Max.X, y)])
	}
	out := &RGB{Width: cfg.Width, Height: cfg.Height, Pix: make([]byte, 3*cfg.Width*cfg.Height)}
	palettedToRGB(out, screen, opt.Background)
	return out, nil
}

// gifUnprocessed is what Pillow's GifDecode.c leaves unconsumed of image data that ends early: it
// starts a sub-block only once the whole sub-block is there, so everything from the first incomplete
// one on. -1 when every sub-block up to the terminator is complete (the failure is elsewhere).
func gifUnprocessed(data []byte, at int) int {
	for p := at; ; {
		if p >= len(data) || p+1+int(data[p]) > len(data) {
			return len(data) - min(p, len(data))
		}
		if data[p] == 0 {
			return -1
		}
		p += 1 + int(data[p])
	}
}
