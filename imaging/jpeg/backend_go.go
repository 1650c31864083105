//go:build !libjpegturbo || !cgo

package jpeg

// Backend names the decoder Decode uses: this package's Go decoder (build with -tags libjpegturbo and
// cgo to use the system's libjpeg-turbo instead).
const Backend = "go"

func decodeBackend(data []byte, maxPixels int64) (*Image, error) { return decodeGo(data, maxPixels) }

// openRows decodes data whole and serves its rows (a PartialError's image is served as it is).
func openRows(data []byte, maxPixels int64) (rowSource, int, int, int, error) {
	img, err := decodeGo(data, maxPixels)
	if pe, ok := err.(*PartialError); ok {
		img, err = pe.Image, nil
	}
	if err != nil {
		return nil, 0, 0, 0, err
	}
	return &imageRows{img: img}, img.Width, img.Height, img.Channels, nil
}

// imageRows serves the rows of an image decoded whole (the Go backend's).
type imageRows struct {
	img *Image
	y   int
}

func (s *imageRows) read(out []byte, n, stride int) (int, error) {
	rowLen := s.img.Width * s.img.Channels
	for i := range n {
		copy(out[i*stride:i*stride+rowLen], s.img.Pix[(s.y+i)*rowLen:])
	}
	s.y += n
	return n, nil
}

func (s *imageRows) close() {}
