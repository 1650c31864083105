package wire

import (
	"errors"
	"fmt"
	"io"
)

// Body is a JSON body as the bytes a writer appended (B) with writers
// spliced in between them, whose megabytes (an image's pixel values,
// encoded as they are made) go to the connection a chunk at a time
// instead of being built in the body first. The zero Body is empty.
type Body struct {
	B       []byte
	splices []splice
}

// splice is the n bytes write writes, inserted before B[at].
type splice struct {
	at    int
	n     int
	write func(w io.Writer) error
}

// SpliceFrom records n bytes that write makes as the body is written (an
// image's pixel values, encoded a chunk at a time while the chunk is in the
// CPU's cache, straight to the connection), to go where dst ends, dst
// being what B will be once the writer is done (it appends to B); it
// returns dst. write must write exactly n bytes to its writer
// and return that writer's error, and may be called again (or never) if
// the body is written again.
func (b *Body) SpliceFrom(dst []byte, n int, write func(w io.Writer) error) []byte {
	if n > 0 {
		b.splices = append(b.splices, splice{at: len(dst), n: n, write: write})
	}
	return dst
}

// Len is the body's length: B and the spliced writers.
func (b *Body) Len() int {
	n := len(b.B)
	for _, s := range b.splices {
		n += s.n
	}
	return n
}

// Reset empties the body, keeping B's capacity.
func (b *Body) Reset() {
	b.B = b.B[:0]
	clear(b.splices)
	b.splices = b.splices[:0]
}

// WriteTo writes the body in order, each spliced writer's bytes as it
// writes them. A spliced writer that
// writes other than its length is an error: the body would not be Len
// bytes.
func (b *Body) WriteTo(w io.Writer) (int64, error) {
	cw := counter{w: w}
	at := 0
	for _, s := range b.splices {
		if _, err := cw.Write(b.B[at:s.at]); err != nil {
			return cw.n, err
		}
		at = s.at
		start := cw.n
		if err := s.write(&cw); err != nil {
			return cw.n, err
		}
		if got := cw.n - start; got != int64(s.n) {
			return cw.n, fmt.Errorf("%w: %d bytes, not %d", ErrSpliceLength, got, s.n)
		}
	}
	_, err := cw.Write(b.B[at:])
	return cw.n, err
}

// ErrSpliceLength is a spliced writer that wrote other than its length: a
// programming error, which leaves the body short or long.
var ErrSpliceLength = errors.New("wire: a spliced writer wrote other than its length")

// counter is a writer counting what it passes on; empty writes are not
// passed on.
type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	k, err := c.w.Write(p)
	c.n += int64(k)
	return k, err
}
