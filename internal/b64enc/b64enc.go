// Package b64enc encodes standard padded base64 (encoding/base64's
// StdEncoding) at memory speed where the CPU allows: an image's answer
// carries about 11 MB of pixel values as base64, encoded a chunk at a time
// as it is written.
package b64enc

import (
	"encoding/base64"

	asmbase64 "github.com/segmentio/asm/base64"
)

// Encode writes the padded standard base64 of src to dst, as
// base64.StdEncoding.Encode does; dst must hold
// base64.StdEncoding.EncodedLen(len(src)) bytes.
//
// With AVX-512 VBMI (Ice Lake, Zen 4 and later) a kernel of our own
// encodes the whole groups of three; otherwise segmentio/asm's encoder
// (AVX2 on amd64, NEON on arm64, else Go's) does all of it.
func Encode(dst, src []byte) {
	if haveVBMI {
		encodeVBMI(dst, src)
		return
	}
	encodeAsm(dst, src)
}

// encodeAsm is the encoder used without AVX-512 VBMI.
func encodeAsm(dst, src []byte) { asmbase64.StdEncoding.Encode(dst, src) }

// encodeGeneric is encoding/base64's own encoder: the reference the
// others are tested against, and what segmentio/asm falls back to.
func encodeGeneric(dst, src []byte) { base64.StdEncoding.Encode(dst, src) }
