package jpeg

import (
	"unsafe"

	"github.com/vrender/vrender/internal/nozero"
)

// Rows decodes an image top to bottom a batch of rows at a time into one small buffer it reuses, so
// that a consumer reading rows in order (a resize) never holds the whole decoded image. It gives the
// samples Decode gives and fails where Decode fails, except that a decode libjpeg stops (Decode's
// *PartialError) is not an error: rows from the one it stopped at on come back blank, which is the
// image the PartialError holds. Close releases the decoder.
type Rows struct {
	Width, Height int
	Channels      int
	src           rowSource
	buf           []byte
	stride        int
	n, at         int   // rows in buf, the next one to hand out
	y             int   // rows handed out
	blankFrom     int   // the first blank row: Height until the decoder stops
	err           error // the decode's failure, once found
}

// rowSource is a backend's decoder. read decodes the next n rows into out, stride bytes apart, and
// returns how many it wrote: fewer than n, without an error, when the decoder stopped (the rest of the
// image is blank). An error is the decode failing as Decode would.
type rowSource interface {
	read(out []byte, n, stride int) (int, error)
	close()
}

// RowSlack is how many bytes past its end every row Next returns may be read (its capacity): room for
// vector kernels that load a little beyond the last pixel.
const RowSlack = 32

// rowBatch rows are decoded per call into the decoder. Measured on a 1280x720 4:2:0 photo (decode and
// resize, one core): batches of 4 and 16 rows cost 0.5-1 ms more than 32, 64 or 128 — the decoder and
// the resize take turns in the CPU's caches less often — and 32 keeps a 1080p batch at 186 KB, within
// L2. A multiple of every row group libjpeg-turbo outputs at once (1, 2 or 4 rows), so batches never
// split one.
const rowBatch = 32

// NewRows reads the header (checking maxPixels as Decode does) and starts decoding. Errors in the
// compressed data are returned by Next or Finish (with the Go backend, which decodes everything here,
// by NewRows).
func NewRows(data []byte, maxPixels int64) (*Rows, error) {
	src, w, h, c, err := openRows(data, maxPixels)
	if err != nil {
		return nil, err
	}
	// Every row starts outSkew bytes past a 32-byte boundary (see outSkew).
	stride := (w*c + RowSlack + 31) &^ 31
	return &Rows{Width: w, Height: h, Channels: c, src: src, stride: stride, buf: skewed(rowBatch * stride), blankFrom: h}, nil
}

// Next returns the next row, Width*Channels bytes with RowSlack more of capacity, valid until the next
// call. Once it returned an error it returns that error again; after the last row, errRowsDone.
func (r *Rows) Next() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.y >= r.Height {
		return nil, errRowsDone
	}
	if r.at == r.n {
		n := min(rowBatch, r.Height-r.y)
		if r.src != nil {
			done, err := r.src.read(r.buf, n, r.stride)
			if err != nil {
				r.Close()
				r.err = err
				return nil, err
			}
			if done < n {
				r.blankFrom = r.y + done
				r.Close()
			}
		}
		// Rows the decoder never wrote (it stopped in or before this batch) are Pillow's blank memory.
		for i := max(r.blankFrom-r.y, 0); i < n; i++ {
			row := r.buf[i*r.stride : i*r.stride+r.Width*r.Channels]
			for j := range row {
				row[j] = blank(r.Channels)
			}
		}
		r.n, r.at = n, 0
	}
	row := r.buf[r.at*r.stride : r.at*r.stride+r.Width*r.Channels : (r.at+1)*r.stride]
	r.at++
	r.y++
	return row, nil
}

// Finish decodes the rows not yet read, so that an error anywhere in the image is found (or returns
// the one Next returned), and closes r.
func (r *Rows) Finish() error {
	defer r.Close()
	for r.y < r.Height {
		if _, err := r.Next(); err != nil {
			return err
		}
	}
	return r.err
}

// Close releases the decoder; it may be called more than once.
func (r *Rows) Close() {
	if r.src != nil {
		r.src.close()
		r.src = nil
	}
}

type rowsError string

func (e rowsError) Error() string { return string(e) }

const errRowsDone = rowsError("jpeg: no more rows")

// outSkew is how far decoder output starts past a 32-byte boundary. libjpeg-turbo's AVX2 colour
// conversion writes rows that start on one with non-temporal stores, which send the decoded image
// past the caches to memory, where the resize then has to fetch it back; rows that start elsewhere get
// ordinary stores and are still in cache when the resize reads them. The samples are the same.
const outSkew = 8

// skewed returns n bytes, not zeroed, starting outSkew bytes past a 32-byte boundary.
func skewed(n int) []byte {
	buf := nozero.Bytes(n + 32)
	off := (outSkew - int(uintptr(unsafe.Pointer(unsafe.SliceData(buf))))) & 31
	return buf[off : off+n : off+n]
}
