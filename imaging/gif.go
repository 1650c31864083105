package imaging

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"image/gif"
)

func gifHeader(data []byte) (header, error) {
	if len(data) < 13 {
		return header{}, ErrUnidentified
	}
	w, h := int(binary.LittleEndian.Uint16(data[6:])), int(binary.LittleEndian.Uint16(data[8:]))
	return header{format: GIF, mode: "P", width: w, height: h, orientation: 1, decode: decodeGIF}, nil
}

// decodeGIF gives the first frame as Pillow 9.4 does: a logical-screen-sized P image whose pixels
// outside the frame are the transparent index when there is one, else index 0.
func decodeGIF(data []byte, opt Options) (*RGB, error) {
	cfg, err := gif.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, decodeErr(err)
	}
	m, err := gif.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, decodeErr(err)
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
