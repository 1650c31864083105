package imaging

import "github.com/vrender/vrender/imaging/jpeg"

// Rows is Load's image read a row at a time, top to bottom, from a decoder that never holds the
// whole image: for the images whose decoded rows are Load's RGB rows as they are, JPEGs of three
// components without an EXIF orientation to apply.
type Rows struct {
	Width, Height int
	r             *jpeg.Rows
}

// OpenRows is Load up to the first row. ok is false, with nothing done, for an image Rows does not
// serve (Load it instead). The errors are Load's for the same data: those of the header and the pixel
// limits now, those inside the compressed data from Next or Finish.
func OpenRows(data []byte, opt Options) (rows *Rows, ok bool, err error) {
	if len(data) < 3 || string(data[:3]) != "\xff\xd8\xff" {
		return nil, false, nil
	}
	h, err := readHeader(data)
	if err != nil {
		return nil, false, err
	}
	if h.mode != "RGB" || h.orientation != 1 {
		return nil, false, nil
	}
	if err := checkPixels(h.width, h.height, opt); err != nil {
		return nil, false, err
	}
	r, err := jpeg.NewRows(data, PillowMaxPixels)
	if err != nil {
		return nil, false, jpegError(err)
	}
	return &Rows{Width: r.Width, Height: r.Height, r: r}, true, nil
}

// Next returns the next row, Width*3 bytes of RGB with jpeg.RowSlack more of capacity, valid until the
// next call. After an error, or the last row, it returns an error.
func (r *Rows) Next() ([]byte, error) {
	row, err := r.r.Next()
	if err != nil {
		return nil, jpegError(err)
	}
	return row, nil
}

// Finish decodes the rows not yet read, so that Load's error for data broken below the rows a caller
// needed is still found, and releases the decoder.
func (r *Rows) Finish() error {
	if err := r.r.Finish(); err != nil {
		return jpegError(err)
	}
	return nil
}

// Close releases the decoder; it may be called more than once, and after Finish.
func (r *Rows) Close() { r.r.Close() }
