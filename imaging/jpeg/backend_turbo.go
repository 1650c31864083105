//go:build libjpegturbo && cgo

package jpeg

/*
#cgo LDFLAGS: -ljpeg
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>
#include <jerror.h>

struct vr_err {
	struct jpeg_error_mgr pub;
	jmp_buf jb;
	int eof;
	unsigned int done; // rows output so far, kept here because locals are lost to longjmp
	char msg[JMSG_LENGTH_MAX];
};

static void vr_error_exit(j_common_ptr c) {
	struct vr_err *e = (struct vr_err *)c->err;
	(*c->err->format_message)(c, e->msg);
	longjmp(e->jb, 1);
}

// Warnings (corrupt data that libjpeg repairs) are ignored, as Pillow ignores them; running out of data
// is remembered: Pillow's suspending source reports it as a truncated file.
static void vr_emit(j_common_ptr c, int level) {
	if (level < 0 && c->err->msg_code == JWRN_JPEG_EOF)
		((struct vr_err *)c->err)->eof = 1;
}

// vr_decode: 0 ok, 1 libjpeg's error (msg filled; *done rows were output before it), 2 truncated,
// 3 the header disagrees with the Go parser's. out holds w*h*comps bytes.
static int vr_decode(const unsigned char *data, unsigned long n, unsigned char *out,
                     unsigned int w, unsigned int h, int comps, char *msg, unsigned int *done) {
	struct jpeg_decompress_struct cinfo;
	struct vr_err err;
	cinfo.err = jpeg_std_error(&err.pub);
	err.pub.error_exit = vr_error_exit;
	err.pub.emit_message = vr_emit;
	err.eof = 0;
	err.done = 0;
	*done = 0;
	if (setjmp(err.jb)) {
		memcpy(msg, err.msg, JMSG_LENGTH_MAX);
		*done = err.done;
		jpeg_destroy_decompress(&cinfo);
		return 1;
	}
	jpeg_create_decompress(&cinfo);
	jpeg_mem_src(&cinfo, data, n);
	jpeg_read_header(&cinfo, TRUE);
	if (cinfo.image_width != w || cinfo.image_height != h || cinfo.num_components != comps) {
		snprintf(msg, JMSG_LENGTH_MAX, "header disagrees with the Go parser");
		jpeg_destroy_decompress(&cinfo);
		return 3;
	}
	cinfo.out_color_space = comps == 1 ? JCS_GRAYSCALE : comps == 3 ? JCS_RGB : JCS_CMYK;
	jpeg_start_decompress(&cinfo);
	// Rows are asked for a row group at a time (rec_outbuf_height, 2 for 2x2 chroma subsampling), so
	// that libjpeg upsamples and converts straight into out instead of through its spare row.
	JSAMPROW rows[16];
	int group = cinfo.rec_outbuf_height < 1 ? 1 : cinfo.rec_outbuf_height > 16 ? 16 : cinfo.rec_outbuf_height;
	while (cinfo.output_scanline < cinfo.output_height && !err.eof) {
		int n = cinfo.output_height - cinfo.output_scanline < (JDIMENSION)group ? cinfo.output_height - cinfo.output_scanline : group;
		for (int i = 0; i < n; i++)
			rows[i] = out + (size_t)(cinfo.output_scanline + i) * w * comps;
		jpeg_read_scanlines(&cinfo, rows, n);
		err.done = cinfo.output_scanline;
	}
	jpeg_destroy_decompress(&cinfo);
	return err.eof ? 2 : 0;
}
*/
import "C"

import (
	"errors"
	"unsafe"

	"github.com/vrender/vrender/internal/nozero"
)

// Backend names the decoder Decode uses.
const Backend = "libjpeg-turbo"

// decodeBackend reads the header in Go first (pixel limit, supported layout) so nothing is allocated
// for a refused image, then lets libjpeg-turbo decode into a Go buffer with Pillow's output colour
// space for the component count (the settings Pillow's JpegDecode.c uses).
func decodeBackend(data []byte, maxPixels int64) (*Image, error) {
	h, err := DecodeHeader(data)
	if err != nil {
		return nil, err
	}
	if maxPixels > 0 && int64(h.Width)*int64(h.Height) > maxPixels {
		return nil, ErrTooManyPixels
	}
	img := &Image{Width: h.Width, Height: h.Height, Channels: h.Components, Pix: skewed(h.Width * h.Height * h.Components)}
	if err := decodeInto(data, img); err != nil {
		return nil, err
	}
	return img, nil
}

// decodeInto decodes data, whose header img's fields repeat, into img.Pix. Pix need not be zeroed: a
// decode that succeeds has written every row, one that libjpeg stopped has the rest blanked (and
// comes back as a *PartialError), and one that stops otherwise returns no image.
func decodeInto(data []byte, img *Image) error {
	var msg [C.JMSG_LENGTH_MAX]C.char
	var done C.uint
	rc := C.vr_decode((*C.uchar)(unsafe.Pointer(&data[0])), C.ulong(len(data)), (*C.uchar)(unsafe.Pointer(&img.Pix[0])),
		C.uint(img.Width), C.uint(img.Height), C.int(img.Channels), &msg[0], &done)
	switch rc {
	case 0:
		return nil
	case 1:
		err := errors.New("libjpeg: " + C.GoString(&msg[0]))
		return partial(img, min(int(done), img.Height), err)
	case 2:
		if n := Unprocessed(data); n >= 0 {
			return &TruncatedError{Unprocessed: n}
		}
		return ErrTruncated
	}
	return errors.New("libjpeg: " + C.GoString(&msg[0]))
}

// outSkew is how far the output starts past a 32-byte boundary. libjpeg-turbo's AVX2 colour
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
