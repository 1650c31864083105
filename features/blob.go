package features

import (
	"encoding/base64"
	"slices"

	asmbase64 "github.com/segmentio/asm/base64"
)

// Blob is an encoded value (an item's msgpack) as the pieces it was written
// from, in order: the encoder leaves a tensor's megabytes where the
// processor wrote them instead of copying them into one buffer, and the JSON
// writer base64-encodes the pieces straight into the body. A nil Blob is
// null; a decoded one is a single piece.
type Blob [][]byte

// Len is the number of encoded bytes.
func (b Blob) Len() int {
	n := 0
	for _, p := range b {
		n += len(p)
	}
	return n
}

// Bytes is the encoded value in one slice: the piece itself when there is
// one, else a copy of the pieces joined; nil for a nil Blob.
func (b Blob) Bytes() []byte {
	switch len(b) {
	case 0:
		if b == nil {
			return nil
		}
		return []byte{}
	case 1:
		return b[0]
	}
	return slices.Concat(b...)
}

// appendBase64 appends the padded standard base64 of b's bytes: each piece
// goes through segmentio/asm's AVX2 encoder (NEON on arm64; about four
// times encoding/base64 on pixel values), the up to two bytes a piece leaves
// over joined to the next piece's first ones.
func appendBase64(dst []byte, b Blob) []byte {
	dst = slices.Grow(dst, base64.StdEncoding.EncodedLen(b.Len()))
	var carry [3]byte
	c := 0
	for _, p := range b {
		if c > 0 {
			k := copy(carry[c:], p)
			c += k
			p = p[k:]
			if c < 3 {
				continue
			}
			dst = appendBase64Whole(dst, carry[:])
			c = 0
		}
		whole := len(p) / 3 * 3
		dst = appendBase64Whole(dst, p[:whole])
		c = copy(carry[:], p[whole:])
	}
	return base64.StdEncoding.AppendEncode(dst, carry[:c])
}

// appendBase64Whole encodes p, a multiple of three bytes long (no padding),
// into dst's spare capacity.
func appendBase64Whole(dst, p []byte) []byte {
	n := len(dst)
	dst = slices.Grow(dst, len(p)/3*4)[:n+len(p)/3*4]
	asmbase64.StdEncoding.Encode(dst[n:], p)
	return dst
}
