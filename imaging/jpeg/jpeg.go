// Package jpeg decodes baseline and progressive JPEG to the samples libjpeg-turbo 2.1.5 gives Pillow 9.4
// with its default settings: the integer ("islow") inverse DCT, fancy (triangle) chroma upsampling, and
// libjpeg's fixed-point YCbCr->RGB tables. Grayscale stays one channel and 4-component images come out as
// CMYK samples (YCCK converted, Adobe inversion left as stored) for the caller to convert as Pillow does.
//
// The entropy decoder is Go's image/jpeg (BSD licence, headers kept in the copied files); the IDCT,
// upsampling and colour conversion follow libjpeg-turbo's jidctint.c, jdsample.c and jdcolor.c
// (internal/idct, internal/upsample, internal/ycc: Go, plus AVX2 assembly tested identical to it).
package jpeg

import (
	"errors"
	"io"

	"github.com/vrender/vrender/imaging/jpeg/internal/ycc"
)

// ErrTruncated reports that the data ended before the image was complete.
var ErrTruncated = errors.New("jpeg: image data is truncated")

// TruncatedError is ErrTruncated with the number of bytes Pillow reports as "not processed" for the
// same file (what libjpeg-turbo, fed as Pillow feeds it, had left unconsumed when the data ran out).
type TruncatedError struct {
	Unprocessed int
}

func (e *TruncatedError) Error() string { return ErrTruncated.Error() }

// Is makes errors.Is(err, ErrTruncated) hold.
func (e *TruncatedError) Is(target error) bool { return target == ErrTruncated }

// Unprocessed replays a JPEG's decoding the way Pillow feeds it to libjpeg-turbo and returns how many
// bytes were left unconsumed when it ran out of data, or -1 when it did not run out. Inside a scan that
// is the data after the last complete MCU; inside a marker segment after the first scan (libjpeg's
// marker reader suspends without consuming the segment), the data after the marker code.
func Unprocessed(data []byte) int {
	d := decoder{consumed: newConsumption(data)}
	switch err := d.decode(data, false); {
	case err == errConsumptionDone:
		return d.consumed.unprocessed
	case err == io.ErrUnexpectedEOF && d.sawSOS:
		return len(data) - min(d.markerAt+2, len(data))
	}
	return -1
}

// PartialError is a decode that libjpeg stopped with an error (not running out of data) after the
// header: Pillow's load raises it, yet the image it was loading keeps the rows output before the error
// and blank memory after them, and a second load() returns that image without complaint (its tiles
// are spent). Image is that image: Pillow's samples as Decode gives them, blank rows being Pillow's
// zeroed memory (CMYK's 255, its stored inversion of zero ink).
type PartialError struct {
	Image *Image
	Err   error
}

func (e *PartialError) Error() string { return e.Err.Error() }

func (e *PartialError) Unwrap() error { return e.Err }

// partial blanks img from row done on and wraps err with it.
func partial(img *Image, done int, err error) *PartialError {
	rest := img.Pix[done*img.Width*img.Channels:]
	for i := range rest {
		rest[i] = blank(img.Channels)
	}
	return &PartialError{Image: img, Err: err}
}

// blank is the sample of a row the decoder never wrote: zero, CMYK's 255.
func blank(channels int) byte {
	if channels == 4 {
		return 255
	}
	return 0
}

// ErrHeaderTruncated reports that the data ended inside a marker segment before the first scan (where
// Pillow's own parser reads a segment whose length says more bytes follow).
var ErrHeaderTruncated = errors.New("jpeg: marker segment is truncated")

// ErrTooManyPixels reports that the frame header declares more pixels than Decode was allowed.
var ErrTooManyPixels = errors.New("jpeg: image has too many pixels")

// Header is what the markers before the first scan say.
type Header struct {
	Width, Height int
	// Components is 1 (grayscale), 3 (YCbCr or RGB) or 4 (CMYK or YCCK): Pillow's modes L, RGB, CMYK.
	Components int
	// Exif is the first APP1 segment starting "Exif\x00\x00" (whole payload), nil when absent.
	Exif []byte
}

// Image is decoded samples, rows top to bottom, Channels bytes a pixel (1 gray, 3 RGB, 4 CMYK).
type Image struct {
	Width, Height int
	Channels      int
	Pix           []byte
}

// DecodeHeader reads the markers up to the first scan without decoding any image data.
func DecodeHeader(data []byte) (Header, error) {
	var d decoder
	if err := d.decode(data, true); err != nil {
		return Header{}, mapErr(err)
	}
	if d.nComp == 0 {
		return Header{}, FormatError("missing SOF marker")
	}
	return Header{Width: d.width, Height: d.height, Components: d.nComp, Exif: d.exif}, nil
}

// Decode decodes the whole image. maxPixels (0: no limit) is checked against the frame header before
// any sample buffer is allocated. Built with the libjpegturbo tag (and cgo), the samples come from the
// system's libjpeg-turbo, else from this package's Go decoder; both give Pillow's samples (Backend
// names the one in use).
func Decode(data []byte, maxPixels int64) (*Image, error) {
	return decodeBackend(data, maxPixels)
}

// decodeGo is the pure-Go decoder.
func decodeGo(data []byte, maxPixels int64) (*Image, error) {
	d := decoder{maxPixels: maxPixels}
	if err := d.decode(data, false); err != nil {
		if me, ok := err.(*markerError); ok {
			// What libjpeg output before it met the segment: a single-scan image whole (libjpeg
			// stops reading after its last row), any other none of it (libjpeg reads every scan
			// before the first row).
			if d.sawScanData && d.singleScan {
				return d.output(), nil
			}
			img := &Image{Width: d.width, Height: d.height, Channels: d.nComp, Pix: make([]byte, d.width*d.height*d.nComp)}
			return nil, partial(img, 0, me.err)
		}
		err = mapErr(err)
		if err == ErrTruncated {
			if n := Unprocessed(data); n >= 0 {
				return nil, &TruncatedError{Unprocessed: n}
			}
		}
		return nil, err
	}
	return d.output(), nil
}

func mapErr(err error) error {
	if err == ErrHeaderTruncated || err == ErrTooManyPixels {
		return err
	}
	if err == io.ErrUnexpectedEOF || err == io.EOF || err == errShortHuffmanData {
		return ErrTruncated
	}
	return err
}

// colorSpace is libjpeg's jpeg_color_space guess (jdapimin.c default_decompress_parms).
func (d *decoder) colorSpace() colorSpace {
	switch d.nComp {
	case 1:
		return csGray
	case 3:
		if d.jfif {
			return csYCbCr
		}
		if d.adobeTransformValid {
			if d.adobeTransform == 0 {
				return csRGB
			}
			return csYCbCr
		}
		if d.comp[0].c == 'R' && d.comp[1].c == 'G' && d.comp[2].c == 'B' {
			return csRGB
		}
		return csYCbCr
	default:
		if d.adobeTransformValid && d.adobeTransform != 0 {
			return csYCCK
		}
		return csCMYK
	}
}

type colorSpace uint8

const (
	csGray colorSpace = iota
	csYCbCr
	csRGB
	csCMYK
	csYCCK
)

// output upsamples every component to full resolution row by row and converts the colour space.
func (d *decoder) output() *Image {
	w, h := d.width, d.height
	cs := d.colorSpace()
	channels := d.nComp
	img := &Image{Width: w, Height: h, Channels: channels, Pix: make([]byte, w*h*channels)}
	var ups [maxComponents]upsampler
	hmax, vmax := 1, 1
	for i := 0; i < d.nComp; i++ {
		hmax = max(hmax, d.comp[i].h)
		vmax = max(vmax, d.comp[i].v)
	}
	for i := 0; i < d.nComp; i++ {
		ups[i] = newUpsampler(d.planes[i], d.strides[i], w, h, d.comp[i].h, d.comp[i].v, hmax, vmax)
	}
	var rows [maxComponents][]byte
	for y := 0; y < h; y++ {
		for i := 0; i < d.nComp; i++ {
			rows[i] = ups[i].row(y)[:w]
		}
		out := img.Pix[y*w*channels : (y+1)*w*channels]
		switch cs {
		case csGray:
			copy(out, rows[0])
		case csYCbCr:
			ycc.ToRGB(out, rows[0], rows[1], rows[2])
		case csRGB:
			interleave3(out, rows[0], rows[1], rows[2])
		case csCMYK:
			interleave4(out, rows[0], rows[1], rows[2], rows[3])
		case csYCCK:
			ycc.ToCMYK(out, rows[0], rows[1], rows[2], rows[3])
		}
	}
	return img
}

func interleave3(out, a, b, c []byte) {
	for x := range a {
		o := out[3*x : 3*x+3 : 3*x+3]
		o[0], o[1], o[2] = a[x], b[x], c[x]
	}
}

func interleave4(out, a, b, c, k []byte) {
	for x := range a {
		o := out[4*x : 4*x+4 : 4*x+4]
		o[0], o[1], o[2], o[3] = a[x], b[x], c[x], k[x]
	}
}
