//go:build !(libdeflate && cgo)

package imaging

import (
	"bytes"
	"io"

	"github.com/klauspost/compress/zlib"
)

// inflateZlib inflates the zlib stream src into exactly len(dst) bytes with klauspost/compress's zlib
// (a faster fork of compress/flate: ~1.4x on PNG IDAT streams, the same bytes): true only when the stream is
// valid, its Adler-32 matches, it gives exactly len(dst) bytes and ends exactly at the end of src —
// the conditions under which image/png accepts an IDAT stream.
func inflateZlib(dst, src []byte) bool {
	br := bytes.NewReader(src)
	r, err := zlib.NewReader(br)
	if err != nil {
		return false
	}
	if _, err := io.ReadFull(r, dst); err != nil {
		return false
	}
	// One more read reaches the end of the stream and checks the Adler-32; flate reads src a byte at a
	// time as bits are needed, so nothing is left in br exactly when the stream ends with src.
	var one [1]byte
	n, err := r.Read(one[:])
	return n == 0 && err == io.EOF && br.Len() == 0
}
