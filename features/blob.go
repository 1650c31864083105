package features

import (
	"encoding/base64"
	"fmt"
	"slices"

	asmbase64 "github.com/segmentio/asm/base64"

	"github.com/vrender/vrender/internal/b64enc"
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

// ItemBytes is one kwargs or metadata item as the JSON writer writes it:
// its bytes, encoded as they are written. The zero ItemBytes is null.
type ItemBytes struct {
	Raw Blob
	// stream, when set, is the whole item, encoded as it is written (an
	// image's pending pixel values); Raw is then nil.
	stream *itemStream
}

// RawItem is the item of raw bytes b (null when b is nil).
func RawItem(b Blob) ItemBytes { return ItemBytes{Raw: b} }

// IsNull reports whether the item is null.
func (it ItemBytes) IsNull() bool { return it.Raw == nil && it.stream == nil }

// Len is the item's length in bytes, before base64.
func (it ItemBytes) Len() int {
	if it.stream != nil {
		return it.stream.len()
	}
	return it.Raw.Len()
}

// Bytes is the item's bytes (its pending pixel values made): nil for a
// null item.
func (it ItemBytes) Bytes() []byte {
	st := it.stream
	if st == nil {
		return it.Raw.Bytes()
	}
	var b []byte
	if err := st.writeBase64(nil, &b); err != nil {
		// Cannot happen: appending fails nowhere, and a source fails
		// only by its writer's error.
		panic("features: " + err.Error())
	}
	raw := make([]byte, st.len())
	if n, err := asmbase64.StdEncoding.Decode(raw, b); err != nil || n != len(raw) {
		panic(fmt.Sprintf("features: a pending item's base64 decodes to %d bytes of %d: %v", n, len(raw), err))
	}
	return raw
}

// appendBase64 appends the padded standard base64 of b's bytes: each piece
// goes through b64enc (AVX-512 VBMI or segmentio/asm's AVX2 and NEON
// encoders, many times encoding/base64 on pixel values), the up to two bytes
// a piece leaves over joined to the next piece's first ones.
func appendBase64(dst []byte, b Blob) []byte {
	s := base64Stream{dst: slices.Grow(dst, base64.StdEncoding.EncodedLen(b.Len()))}
	for _, p := range b {
		s.write(p)
	}
	return base64.StdEncoding.AppendEncode(s.dst, s.carry[:s.c])
}

// base64Stream appends to dst the base64 of the bytes written to it, in
// groups of three: the up to two bytes left over wait in carry for the
// next write (or for whoever ends the stream).
type base64Stream struct {
	dst   []byte
	carry [3]byte
	c     int
}

func (s *base64Stream) write(p []byte) {
	if s.c > 0 {
		k := copy(s.carry[s.c:], p)
		s.c += k
		p = p[k:]
		if s.c < 3 {
			return
		}
		s.dst = appendBase64Whole(s.dst, s.carry[:])
		s.c = 0
	}
	whole := len(p) / 3 * 3
	s.dst = appendBase64Whole(s.dst, p[:whole])
	s.c = copy(s.carry[:], p[whole:])
}

// appendBase64Whole encodes p, a multiple of three bytes long (no padding),
// into dst's spare capacity.
//
// b64enc's AVX-512 VBMI kernel encodes a megabyte in half the time of
// segmentio's AVX2 encoder on Zen 5 (which it falls back to elsewhere): a
// kernel of our own in 128-bit registers had not paid on Zen 1 (branch
// s6-b64-proto, issue 31).
func appendBase64Whole(dst, p []byte) []byte {
	n := len(dst)
	dst = slices.Grow(dst, len(p)/3*4)[:n+len(p)/3*4]
	b64enc.Encode(dst[n:], p)
	return dst
}
