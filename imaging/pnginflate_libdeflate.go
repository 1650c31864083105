//go:build libdeflate && cgo

package imaging

/*
#cgo LDFLAGS: -ldeflate
#include <libdeflate.h>

// vr_inflate: 1 when src is one zlib stream that fills exactly n bytes of dst and ends at the end of src.
static int vr_inflate(const void *src, size_t m, void *dst, size_t n) {
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	if (d == NULL)
		return 0;
	size_t in = 0;
	// A NULL actual_out makes anything but exactly n bytes an error.
	enum libdeflate_result r = libdeflate_zlib_decompress_ex(d, src, m, dst, n, &in, NULL);
	libdeflate_free_decompressor(d);
	return r == LIBDEFLATE_SUCCESS && in == m;
}
*/
import "C"

import "unsafe"

// inflateZlib inflates the zlib stream src into exactly len(dst) bytes with libdeflate (whole-buffer
// inflate, ~3-4x compress/flate): true only when the stream is valid, its Adler-32 matches, it gives
// exactly len(dst) bytes and ends exactly at the end of src — the conditions under which image/png
// accepts an IDAT stream.
func inflateZlib(dst, src []byte) bool {
	if len(dst) == 0 || len(src) == 0 {
		return false
	}
	return C.vr_inflate(unsafe.Pointer(&src[0]), C.size_t(len(src)), unsafe.Pointer(&dst[0]), C.size_t(len(dst))) == 1
}
