package jpeg

import (
	"errors"
	"testing"
)

// FuzzDecode: any bytes decode to an image of the header's size (whole, or a PartialError's) or an
// error; never a panic, and never an allocation beyond the pixel limit.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("\xff\xd8\xff"))
	addCorpusSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		img, err := Decode(data, 1<<22)
		var pe *PartialError
		if errors.As(err, &pe) {
			img, err = pe.Image, nil
		}
		if err != nil {
			return
		}
		h, err := DecodeHeader(data)
		if err != nil {
			t.Fatalf("Decode succeeded, DecodeHeader failed: %v", err)
		}
		if img.Width != h.Width || img.Height != h.Height || img.Channels != h.Components ||
			len(img.Pix) != img.Width*img.Height*img.Channels {
			t.Fatalf("Decode gave %dx%dx%d (%d bytes), header %+v", img.Width, img.Height, img.Channels, len(img.Pix), h)
		}
	})
}
