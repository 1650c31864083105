package imaging

import (
	"errors"
	"fmt"
	"io"

	"github.com/vrender/vrender/imaging/jpeg"
)

// PillowMaxPixels is Pillow's own decompression-bomb limit (2 * Image.MAX_IMAGE_PIXELS), which
// Image.open applies before vLLM's VLLM_MAX_IMAGE_PIXELS check, whatever that is set to.
const PillowMaxPixels = 178_956_970

// DefaultMaxPixels is VLLM_MAX_IMAGE_PIXELS's default, Pillow's limit.
const DefaultMaxPixels = PillowMaxPixels

// Options are the media_io_kwargs and environment settings that change how an image loads.
type Options struct {
	// MaxPixels is VLLM_MAX_IMAGE_PIXELS: images with more pixels (width*height, from the header,
	// before decoding) are refused with a *LimitError. 0 or less disables it, as in vLLM; Pillow's
	// own limit, PillowMaxPixels, still applies.
	MaxPixels int64
	// Background is the colour transparency is composited on: media_io_kwargs.image.rgba_background_color,
	// white by default.
	Background [3]uint8
}

// DefaultOptions are vLLM's defaults: DefaultMaxPixels and a white background.
func DefaultOptions() Options {
	return Options{MaxPixels: DefaultMaxPixels, Background: [3]uint8{255, 255, 255}}
}

// Format is the container an image was identified as.
type Format string

const (
	JPEG Format = "JPEG"
	PNG  Format = "PNG"
	GIF  Format = "GIF"
	BMP  Format = "BMP"
	WEBP Format = "WEBP"
)

// Info is what Probe reads from an image's header: enough for token counts and placeholders.
type Info struct {
	Format Format
	// Mode is the Pillow mode the file opens as (L, RGB, RGBA, LA, P, I, CMYK...).
	Mode string
	// Width and Height are after EXIF orientation: the size Load's image has.
	Width, Height int
	// Orientation is the EXIF orientation applied (1 when none).
	Orientation int
}

// Error is a decode failure. Its text is Pillow's exception message, which vLLM reports as
// "Failed to load image: " + the message with status 400.
type Error struct {
	msg string
	err error
}

func (e *Error) Error() string { return e.msg }

// Unwrap gives the decoder's own error, when there is one, for logs.
func (e *Error) Unwrap() error { return e.err }

// ErrUnidentified is the Error for bytes no supported decoder accepts (Pillow's UnidentifiedImageError).
var ErrUnidentified = &Error{msg: "cannot identify image file <_io.BytesIO object>"}

func unidentified(err error) error {
	return &Error{msg: ErrUnidentified.msg, err: err}
}

func tooManyPixels(w, h int, limit int64) error {
	return &Error{msg: fmt.Sprintf("Image size (%d pixels) exceeds limit of %d pixels, could be decompression bomb DOS attack.", int64(w)*int64(h), limit)}
}

// decodeErr maps a stdlib decoder's failure to Pillow's: data ending early is a truncated file,
// anything else a broken stream.
func decodeErr(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return truncated(err)
	}
	return broken(err)
}

// truncatedRead is Pillow's ImageFile._safe_read failing: a header structure whose length runs past
// the end of the data.
func truncatedRead(err error) error {
	return &Error{msg: "Truncated File Read", err: err}
}

func truncated(err error) error {
	return &Error{msg: "image file is truncated", err: err}
}

// broken is Pillow's message when its decoder reports a broken stream (IMAGING_CODEC_BROKEN).
func broken(err error) error {
	return &Error{msg: "broken data stream when reading image file", err: err}
}

// Is makes errors.Is(err, ErrUnidentified) true for every unidentified-image error.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.msg == e.msg
}

// Probe reads only the header (and EXIF orientation) and returns what Load would return for the
// image's size, or the error Load would give from the header alone: an unidentified format, a header
// too short or malformed, too many pixels. Errors inside the compressed data (truncation, corruption)
// need a full decode and are Load's alone.
func Probe(data []byte, opt Options) (Info, error) {
	h, err := readHeader(data)
	if err != nil {
		return Info{}, err
	}
	if err := checkPixels(h.width, h.height, opt); err != nil {
		return Info{}, err
	}
	return h.info(), nil
}

// Load decodes an image the way vLLM's ImageMediaIO.load_bytes does with image_mode "RGB": Pillow's
// decoders, ImageOps.exif_transpose, then RGBA/LA/PA or any image with transparency composited on
// opt.Background with the alpha mask, everything else converted to RGB.
func Load(data []byte, opt Options) (*RGB, error) {
	h, err := readHeader(data)
	if err != nil {
		return nil, err
	}
	if err := checkPixels(h.width, h.height, opt); err != nil {
		return nil, err
	}
	img, err := h.decode(data, opt)
	if err != nil {
		return nil, err
	}
	return orient(img, h.orientation), nil
}

// checkPixels is Image.open's decompression-bomb check, then vLLM's VLLM_MAX_IMAGE_PIXELS one.
func checkPixels(w, h int, opt Options) error {
	n := int64(w) * int64(h)
	if n > PillowMaxPixels {
		return tooManyPixels(w, h, PillowMaxPixels)
	}
	if opt.MaxPixels > 0 && n > opt.MaxPixels {
		return &LimitError{Width: w, Height: h, Max: opt.MaxPixels}
	}
	return nil
}

// LimitError is an image over VLLM_MAX_IMAGE_PIXELS. vLLM raises it as a ValueError of its own,
// outside Pillow's errors, so its text is answered as it is (400), without "Failed to load image: ".
type LimitError struct {
	// Width and Height are the size the header gives, before EXIF orientation.
	Width, Height int
	Max           int64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("Image dimensions %dx%d (%d pixels) exceed the maximum of %d pixels. Set VLLM_MAX_IMAGE_PIXELS to increase this limit.",
		e.Width, e.Height, int64(e.Width)*int64(e.Height), e.Max)
}

// header is one format's parsed header plus the decoder that goes with it.
type header struct {
	format        Format
	mode          string
	width, height int // as stored, before orientation
	orientation   int
	decode        func(data []byte, opt Options) (*RGB, error)
}

func (h header) info() Info {
	w, ht := h.width, h.height
	if h.orientation >= 5 {
		w, ht = ht, w
	}
	return Info{Format: h.format, Mode: h.mode, Width: w, Height: ht, Orientation: h.orientation}
}

// readHeader identifies the format by its signature, as Pillow's plugins' _accept functions do, and
// parses that format's header.
func readHeader(data []byte) (header, error) {
	switch {
	case len(data) >= 2 && string(data[:2]) == "BM":
		return bmpHeader(data)
	case len(data) >= 6 && (string(data[:6]) == "GIF87a" || string(data[:6]) == "GIF89a"):
		return gifHeader(data)
	case len(data) >= 3 && string(data[:3]) == "\xff\xd8\xff":
		return jpegHeader(data)
	case len(data) >= 8 && string(data[:8]) == "\x89PNG\r\n\x1a\n":
		return pngHeader(data)
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return webpHeader(data)
	}
	return header{}, ErrUnidentified
}

func jpegHeader(data []byte) (header, error) {
	jh, err := jpeg.DecodeHeader(data)
	if errors.Is(err, jpeg.ErrHeaderTruncated) {
		return header{}, truncatedRead(err)
	}
	if err != nil {
		return header{}, unidentified(err)
	}
	h := header{format: JPEG, width: jh.Width, height: jh.Height, orientation: exifOrientation(jh.Exif)}
	h.mode = [...]string{1: "L", 3: "RGB", 4: "CMYK"}[jh.Components]
	h.decode = func(data []byte, opt Options) (*RGB, error) {
		img, err := jpeg.Decode(data, PillowMaxPixels)
		// vLLM loads as ImageOps.exif_transpose (whose copy() runs Pillow's load) inside a
		// try/except that ignores every error, then calls load() again: a decoder error the first
		// load raised is gone, and the image is what the decoder had written (see PartialError).
		var pe *jpeg.PartialError
		if errors.As(err, &pe) {
			img, err = pe.Image, nil
		}
		if err != nil {
			return nil, jpegError(err)
		}
		return jpegToRGB(img), nil
	}
	return h, nil
}

// jpegError is Pillow's error for a JPEG decode that failed after its header was read.
func jpegError(err error) error {
	var te *jpeg.TruncatedError
	if errors.As(err, &te) {
		return &Error{msg: fmt.Sprintf("image file is truncated (%d bytes not processed)", te.Unprocessed), err: err}
	}
	if errors.Is(err, jpeg.ErrTruncated) {
		return truncated(err)
	}
	return broken(err)
}

// jpegToRGB converts libjpeg's output as Pillow does: L is replicated; CMYK was opened with rawmode
// "CMYK;I" (Pillow assumes Adobe's inverted CMYK) and converted with Convert.c cmyk2rgb.
func jpegToRGB(img *jpeg.Image) *RGB {
	out := &RGB{Width: img.Width, Height: img.Height}
	switch img.Channels {
	case 3:
		out.Pix = img.Pix
	case 1:
		out.Pix = grayToRGB(img.Pix)
	case 4:
		out.Pix = make([]byte, img.Width*img.Height*3)
		for i := 0; i < img.Width*img.Height; i++ {
			s := img.Pix[4*i : 4*i+4 : 4*i+4]
			o := out.Pix[3*i : 3*i+3 : 3*i+3]
			nk := 255 - int32(255-s[3])
			for c := 0; c < 3; c++ {
				o[c] = clip8(nk - mulDiv255(255-int32(s[c]), nk))
			}
		}
	}
	return out
}
