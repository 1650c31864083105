package vision

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/vrender/vrender/imaging"
)

// Processor is one model family's image processor. Implementations are safe for concurrent use.
type Processor interface {
	// Plan computes what processing img's size would give — the grid and the placeholder count —
	// without touching pixels: enough for a render that does not return pixel values.
	Plan(width, height int, kw Kwargs) (Plan, error)
	// Process runs the whole processor on img. pixel_values are written into buf's storage when it
	// has room (the result then aliases buf), so that a worker can reuse one buffer; nil allocates.
	Process(buf []byte, img imaging.RGB, kw Kwargs) (*Result, error)
	// ProcessTo is Process with pixel_values handed to w in order, a few tens of kilobytes at a time,
	// as they are made, instead of built in one buffer: a caller that encodes them (base64 for the
	// features) reads them while they are still in the CPU's cache and never holds the tensor. The
	// Result's PixelValues has no Data. An error from w stops the work and is returned.
	ProcessTo(w io.Writer, img imaging.RGB, kw Kwargs) (*Result, error)
	// Prepare is ProcessTo split in two: everything that can fail (planning, resizing) now, the
	// patches when the Prepared is written, so that a server answering with them can decide its
	// status first and write them to the connection as they are made.
	Prepare(img imaging.RGB, kw Kwargs) (*Prepared, error)
	// PrepareData is imaging.Load(data, opt) then Prepare: the same Prepared or the same error
	// (Load's as it is, else Prepare's), with the decode fed to the resize as it goes where it can.
	PrepareData(data []byte, opt imaging.Options, kw Kwargs) (*Prepared, error)
}

// Prepared is an image resized for its processor, whose pixel_values are made when written. It holds
// the resized pixels (img's own when no resize was needed: img must not change while it is in use)
// and is safe for concurrent writers. Its pixels are its own, left to the garbage collector with
// the last reference (a cache may keep them, and answers read them at any time).
type Prepared struct {
	Plan
	// Len is the bytes of pixel_values WriteTo writes.
	Len   int
	dtype DType
	write func(w io.Writer) error
}

// DType is the dtype pixel_values are cast to.
func (p *Prepared) DType() DType { return p.dtype }

// WriteTo writes pixel_values to w in order, a few tens of kilobytes at a time (as ProcessTo); only
// w's error stops it, and is returned.
func (p *Prepared) WriteTo(w io.Writer) (int64, error) {
	cw := countingWriter{w: w}
	err := p.write(&cw)
	return cw.n, err
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// Plan is the shape of one processed image.
type Plan struct {
	// ResizedWidth and ResizedHeight are the size the image is resampled to.
	ResizedWidth, ResizedHeight int
	// GridTHW is image_grid_thw: temporal, height and width in patches.
	GridTHW [3]int
	// NumTokens is how many placeholder tokens the image's one pad token expands to.
	NumTokens int
	// Cols is the width of a pixel_values row (3·temporal·patch² values); pixel_values has
	// GridTHW's product rows.
	Cols int
}

// Result is one processed image.
type Result struct {
	Plan
	// PixelValues is pixel_values, already cast to the model's dtype.
	PixelValues Tensor
}

// Tensor is a dense C-order tensor in little-endian bytes, as the features encoding ships it.
type Tensor struct {
	DType DType
	Shape []int
	Data  []byte
}

// MaxResizedPixels bounds the area an image is resampled to, whatever min_pixels a request asks for:
// twice the largest default of the supported models (Qwen3-VL's 16,777,216), so that no request can
// make the server build a tensor of gigabytes.
const MaxResizedPixels = 1 << 25

// New returns the processor a model's preprocessor_config.json names (image_processor_type), casting
// its outputs to dtype.
func New(preprocessorConfig []byte, dtype DType) (Processor, error) {
	switch dtype {
	case BFloat16, Float16, Float32:
	default:
		return nil, fmt.Errorf("vision: unsupported dtype %v", dtype)
	}
	var head struct {
		Type string `json:"image_processor_type"`
	}
	if err := json.Unmarshal(preprocessorConfig, &head); err != nil {
		return nil, fmt.Errorf("vision: preprocessor_config.json: %w", err)
	}
	switch head.Type {
	case "Qwen2VLImageProcessor", "Qwen2VLImageProcessorFast":
		return newQwen2VL(preprocessorConfig, dtype)
	}
	return nil, fmt.Errorf("vision: image_processor_type %q is not supported", head.Type)
}

// checkRGB rejects an RGB value whose buffer does not match its size.
func checkRGB(img imaging.RGB) error {
	if img.Width <= 0 || img.Height <= 0 || len(img.Pix) != img.Width*img.Height*3 {
		return &Error{Kind: InvalidImage, Message: fmt.Sprintf("image of %dx%d pixels has %d bytes of RGB", img.Width, img.Height, len(img.Pix))}
	}
	return nil
}
