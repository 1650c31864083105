package wire

import "io"

// Body is a JSON body as the bytes a writer appended (B) with read-only
// slices spliced in between them, so that megabytes a cache already holds
// (an image's base64) reach the connection without being copied into the
// body first. The zero Body is empty.
type Body struct {
	B       []byte
	splices []splice
}

// splice is data inserted before B[at].
type splice struct {
	at   int
	data []byte
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

// Len is the body's length: B and the spliced slices.
func (b *Body) Len() int {
	n := len(b.B)
	for _, s := range b.splices {
		n += len(s.data)
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
// http.ResponseWriter's buffers pass a large one straight through).
func (b *Body) WriteTo(w io.Writer) (int64, error) {
	var n int64
	at := 0
	write := func(p []byte) error {
		if len(p) == 0 {
			return nil
		}
		k, err := w.Write(p)
		n += int64(k)
		return err
	}
	for _, s := range b.splices {
		if err := write(b.B[at:s.at]); err != nil {
			return n, err
		}
		if err := write(s.data); err != nil {
			return n, err
		}
		at = s.at
	}
	return n, write(b.B[at:])
}
