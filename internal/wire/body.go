package wire

import (
	"errors"
	"fmt"
	"io"
)

// Body is a JSON body as the bytes a writer appended (B) with read-only
// slices spliced in between them, so that megabytes a cache already holds
// (an image's base64) reach the connection without being copied into the
// body first. The zero Body is empty.
type Body struct {
	B       []byte
	splices []splice
}

// splice is data inserted before B[at], or, with write set, the n bytes
// write writes.
type splice struct {
	at    int
	data  []byte
	n     int
	write func(w io.Writer) error
}

// Splice records data to go where dst ends, dst being what B will be once
// the writer is done (it appends to B); it returns dst. data must not
// change until the body is written.
func (b *Body) Splice(dst, data []byte) []byte {
	if len(data) > 0 {
		b.splices = append(b.splices, splice{at: len(dst), data: data})
	}
	return dst
}

// SpliceFrom records n bytes that write makes as the body is written (an
// image's pixel values, encoded a chunk at a time while the chunk is in the
// CPU's cache, straight to the connection), to go where dst ends as for
// Splice; it returns dst. write must write exactly n bytes to its writer
// and return that writer's error, and may be called again (or never) if
// the body is written again.
func (b *Body) SpliceFrom(dst []byte, n int, write func(w io.Writer) error) []byte {
	if n > 0 {
		b.splices = append(b.splices, splice{at: len(dst), n: n, write: write})
	}
	return dst
}

// Len is the body's length: B and the spliced slices and writers.
func (b *Body) Len() int {
	n := len(b.B)
	for _, s := range b.splices {
		n += len(s.data) + s.n
	}
	return n
}

// Reset empties the body, keeping B's capacity.
func (b *Body) Reset() {
	b.B = b.B[:0]
	clear(b.splices)
	b.splices = b.splices[:0]
}

// WriteTo writes the body in order, each spliced slice in one Write (an
// http.ResponseWriter's buffers pass a large one straight through) and
// each spliced writer's bytes as it writes them. A spliced writer that
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
		if s.write == nil {
			if _, err := cw.Write(s.data); err != nil {
				return cw.n, err
			}
			continue
		}
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
