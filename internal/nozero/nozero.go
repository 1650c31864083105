// Package nozero allocates byte slices whose memory is not zeroed first, for buffers of megabytes
// (a decoded image, an item's base64) that their writer fills whole before anything reads them:
// zeroing them is a pass over memory as costly as the work that then overwrites it.
package nozero

import (
	"strings"
	"unsafe"
)

// Bytes returns n bytes (cap n) of uninitialized memory. The caller must write every byte before
// reading any, and must not hand out a byte it did not write.
//
// strings.Builder grows by the runtime's no-zero allocation, which Go offers no other way; the storage
// is taken from the builder before any string of it can be read, and the builder is dropped, so the
// bytes have one owner.
func Bytes(n int) []byte {
	if n <= 0 {
		return []byte{}
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteByte(0) // a string of length 0 need not point at the storage
	return unsafe.Slice(unsafe.StringData(b.String()), n)
}
