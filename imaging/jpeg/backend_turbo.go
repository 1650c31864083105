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

// vr_stream is one decompression, in C memory so that it lives between calls.
struct vr_stream {
	struct jpeg_decompress_struct cinfo;
	struct vr_err err;
	int created;
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

static struct vr_stream *vr_new(void) { return calloc(1, sizeof(struct vr_stream)); }

static void vr_close(struct vr_stream *s) {
	if (s->created)
		jpeg_destroy_decompress(&s->cinfo);
	free(s);
}

// vr_open reads the header and starts decompression with the output colour space Pillow asks for:
// 0 ok, 1 libjpeg's error (s->err.msg filled), 3 the header disagrees with the Go parser's. data must stay put
// until vr_close, which s needs whatever the result.
static int vr_open(struct vr_stream *s, const unsigned char *data, unsigned long n,
                   unsigned int w, unsigned int h, int comps) {
	s->cinfo.err = jpeg_std_error(&s->err.pub);
	s->err.pub.error_exit = vr_error_exit;
	s->err.pub.emit_message = vr_emit;
	if (setjmp(s->err.jb))
		return 1;
	jpeg_create_decompress(&s->cinfo);
	s->created = 1;
	jpeg_mem_src(&s->cinfo, data, n);
	jpeg_read_header(&s->cinfo, TRUE);
	if (s->cinfo.image_width != w || s->cinfo.image_height != h || s->cinfo.num_components != comps) {
		snprintf(s->err.msg, JMSG_LENGTH_MAX, "header disagrees with the Go parser");
		return 3;
	}
	s->cinfo.out_color_space = comps == 1 ? JCS_GRAYSCALE : comps == 3 ? JCS_RGB : JCS_CMYK;
	jpeg_start_decompress(&s->cinfo);
	return 0;
}

// vr_read decodes the next n rows (fewer at the bottom) into out, stride bytes apart: 0 ok, 1 libjpeg's
// error (s->err.msg filled), 2 the data ran out (now or before). s->err.done is the rows output so far, of the
// whole image. Rows are asked for a row group at a time (rec_outbuf_height, 2 for 2x2 chroma subsampling), so
// that libjpeg upsamples and converts straight into out instead of through its spare row.
static int vr_read(struct vr_stream *s, unsigned char *out, int n, size_t stride) {
	struct jpeg_decompress_struct *c = &s->cinfo;
	JDIMENSION start = c->output_scanline;
	JDIMENSION end = start + (JDIMENSION)n < c->output_height ? start + (JDIMENSION)n : c->output_height;
	if (setjmp(s->err.jb))
		return 1;
	JSAMPROW rows[16];
	int group = c->rec_outbuf_height < 1 ? 1 : c->rec_outbuf_height > 16 ? 16 : c->rec_outbuf_height;
	while (c->output_scanline < end && !s->err.eof) {
		JDIMENSION first = c->output_scanline;
		int k = end - first < (JDIMENSION)group ? (int)(end - first) : group;
		for (int i = 0; i < k; i++)
			rows[i] = out + (size_t)(first - start + i) * stride;
		jpeg_read_scanlines(c, rows, k);
		s->err.done = c->output_scanline;
	}
	return s->err.eof ? 2 : 0;
}
*/
import "C"

import (
	"errors"
	"runtime"
	"unsafe"
)

// Backend names the decoder Decode uses.
const Backend = "libjpeg-turbo"

// decodeBackend decodes the whole image in one read of a turboStream, into a buffer skewed off
// 32-byte alignment (see outSkew).
func decodeBackend(data []byte, maxPixels int64) (*Image, error) {
	t, err := openTurbo(data, maxPixels)
	if err != nil {
		return nil, err
	}
	defer t.close()
	img := &Image{Width: t.w, Height: t.h, Channels: t.comps, Pix: skewed(t.w * t.h * t.comps)}
	if err := t.readImage(img); err != nil {
		return nil, err
	}
	return img, nil
}

// readImage decodes the whole image into img.Pix, which need not be zeroed: a decode that succeeds has
// written every row, one that libjpeg stopped has the rest blanked (and comes back as a
// *PartialError), and one that stops otherwise returns no image.
func (t *turboStream) readImage(img *Image) error {
	done, err := t.read(img.Pix, t.h, t.w*t.comps)
	if err != nil {
		return err
	}
	if done < t.h {
		return partial(img, done, t.stop)
	}
	return nil
}

// turboStream is one libjpeg-turbo decompression, read a batch of rows at a time.
type turboStream struct {
	data  []byte
	s     *C.struct_vr_stream
	pin   runtime.Pinner // data, which libjpeg's memory source reads between calls
	w, h  int
	comps int
	done  int   // rows output so far
	stop  error // libjpeg's error, once it stopped the decode
}

// openTurbo reads the header in Go first (pixel limit, supported layout) so nothing is allocated for a
// refused image, then starts libjpeg-turbo's decompression. libjpeg failing to start is a decode that
// stopped before its first row (read says so), as Pillow's blank image.
func openTurbo(data []byte, maxPixels int64) (*turboStream, error) {
	h, err := DecodeHeader(data)
	if err != nil {
		return nil, err
	}
	if maxPixels > 0 && int64(h.Width)*int64(h.Height) > maxPixels {
		return nil, ErrTooManyPixels
	}
	t := &turboStream{data: data, w: h.Width, h: h.Height, comps: h.Components, s: C.vr_new()}
	if t.s == nil {
		return nil, errors.New("libjpeg: out of memory")
	}
	t.pin.Pin(&data[0])
	switch C.vr_open(t.s, (*C.uchar)(unsafe.Pointer(&data[0])), C.ulong(len(data)), C.uint(h.Width), C.uint(h.Height), C.int(h.Components)) {
	case 1:
		t.stop = t.err()
	case 3:
		err := t.err()
		t.close()
		return nil, err
	}
	return t, nil
}

// read decodes the next n rows into out, stride bytes apart (the last row needs only its own bytes),
// and returns how many it wrote: fewer than asked, without an error, when libjpeg stopped (t.stop says
// why; every later read writes none). An error is the data running out.
func (t *turboStream) read(out []byte, n, stride int) (int, error) {
	if t.stop != nil {
		return 0, nil
	}
	_ = out[(n-1)*stride+t.w*t.comps-1]
	before := t.done
	switch C.vr_read(t.s, (*C.uchar)(unsafe.Pointer(&out[0])), C.int(n), C.size_t(stride)) {
	case 1:
		t.stop = t.err()
	case 2:
		if u := Unprocessed(t.data); u >= 0 {
			return 0, &TruncatedError{Unprocessed: u}
		}
		return 0, ErrTruncated
	}
	t.done = int(t.s.err.done)
	return t.done - before, nil
}

// err is libjpeg's message for the error that stopped it.
func (t *turboStream) err() error {
	return errors.New("libjpeg: " + C.GoString(&t.s.err.msg[0]))
}

func (t *turboStream) close() {
	if t.s != nil {
		C.vr_close(t.s)
		t.s = nil
		t.pin.Unpin()
	}
}

func openRows(data []byte, maxPixels int64) (rowSource, int, int, int, error) {
	t, err := openTurbo(data, maxPixels)
	if err != nil {
		return nil, 0, 0, 0, err
	}
	return t, t.w, t.h, t.comps, nil
}
