package vision

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/vrender/vrender/imaging"
	"github.com/vrender/vrender/internal/nozero"
	"github.com/vrender/vrender/internal/pyfmt"
	"github.com/vrender/vrender/vision/resize"
)

// qwen2VL is Hugging Face's Qwen2VLImageProcessor (transformers v5,
// models/qwen2_vl/image_processing_qwen2_vl.py and image_processing_pil_qwen2_vl.py), which
// Qwen2-VL, Qwen2.5-VL and Qwen3-VL share: smart_resize to a multiple of patch·merge within the
// pixel bounds, bicubic resize, rescale and normalize, the frame repeated to temporal_patch_size,
// then patches flattened in merge-window order.
type qwen2VL struct {
	patch, temporal, merge int
	minPixels, maxPixels   int
	dtype                  DType
	// fast and slow are the level tables of the torchvision and PIL backends; fastKernel and
	// slowKernel their vector patch kernels, nil where none is proven equal to the tables.
	fast, slow             [3]levelTable
	fastKernel, slowKernel *levelKernel
	scratch                sync.Pool // *qwenScratch
	// tables are the resize weights of the sizes served lately: kept here, not only in the pooled
	// Resizers, which every garbage collection drops, so that a size's are computed once.
	tables resize.Tables
}

// keepScratchPixels is the largest image whose resize buffers go back to the pool: an occasional huge
// image should not leave every pooled scratch holding hundreds of megabytes. Only Process and
// ProcessTo use the pool: a Prepared's pixels are its own, and a cache may keep them.
const keepScratchPixels = 1 << 23

type qwenScratch struct {
	resizer resize.Resizer
	resized []uint8
}

// qwen2VLConfig is the part of preprocessor_config.json the processor reads, with Hugging Face's
// defaults where a key is absent.
type qwen2VLConfig struct {
	PatchSize         *int `json:"patch_size"`
	TemporalPatchSize *int `json:"temporal_patch_size"`
	MergeSize         *int `json:"merge_size"`
	MinPixels         *int `json:"min_pixels"`
	MaxPixels         *int `json:"max_pixels"`
	RawSize           *struct {
		ShortestEdge *int `json:"shortest_edge"`
		LongestEdge  *int `json:"longest_edge"`
	} `json:"size"`
	ImageMean     []float64 `json:"image_mean"`
	ImageStd      []float64 `json:"image_std"`
	RescaleFactor *float64  `json:"rescale_factor"`
	DoRescale     *bool     `json:"do_rescale"`
	DoNormalize   *bool     `json:"do_normalize"`
	DoResize      *bool     `json:"do_resize"`
	Resample      *int      `json:"resample"`
}

// OpenAI CLIP's statistics, the processor's default mean and std.
var (
	clipMean = []float64{0.48145466, 0.4578275, 0.40821073}
	clipStd  = []float64{0.26862954, 0.26130258, 0.27577711}
)

// pilBicubic is PIL.Image.Resampling.BICUBIC, the processor's resample.
const pilBicubic = 3

func newQwen2VL(raw []byte, dtype DType) (*qwen2VL, error) {
	var c qwen2VLConfig
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("vision: Qwen2-VL preprocessor_config.json: %w", err)
	}
	q := &qwen2VL{patch: 14, temporal: 2, merge: 2, minPixels: 56 * 56, maxPixels: 28 * 28 * 1280, dtype: dtype}
	setInt := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	setInt(&q.patch, c.PatchSize)
	setInt(&q.temporal, c.TemporalPatchSize)
	setInt(&q.merge, c.MergeSize)
	if c.RawSize != nil {
		if c.RawSize.ShortestEdge == nil || c.RawSize.LongestEdge == nil {
			return nil, fmt.Errorf("vision: Qwen2-VL size must contain 'shortest_edge' and 'longest_edge' keys")
		}
		q.minPixels, q.maxPixels = *c.RawSize.ShortestEdge, *c.RawSize.LongestEdge
	}
	setInt(&q.minPixels, c.MinPixels) // min_pixels/max_pixels override size, for backward compatibility
	setInt(&q.maxPixels, c.MaxPixels)
	if q.patch < 1 || q.temporal < 1 || q.merge < 1 || q.patch*q.merge > 1<<10 || q.temporal > 16 {
		return nil, fmt.Errorf("vision: Qwen2-VL patch_size %d, temporal_patch_size %d, merge_size %d out of range", q.patch, q.temporal, q.merge)
	}
	if q.minPixels < 0 || q.maxPixels < 1 {
		return nil, fmt.Errorf("vision: Qwen2-VL pixel bounds %d..%d out of range", q.minPixels, q.maxPixels)
	}
	if c.DoResize != nil && !*c.DoResize {
		return nil, fmt.Errorf("vision: Qwen2-VL with do_resize false is not supported")
	}
	if c.Resample != nil && *c.Resample != pilBicubic {
		return nil, fmt.Errorf("vision: Qwen2-VL resample %d is not supported (only BICUBIC, 3)", *c.Resample)
	}
	n := normalization{doRescale: true, doNormalize: true, rescale: 1.0 / 255}
	if c.DoRescale != nil {
		n.doRescale = *c.DoRescale
	}
	if c.DoNormalize != nil {
		n.doNormalize = *c.DoNormalize
	}
	if !n.doRescale && !n.doNormalize {
		return nil, fmt.Errorf("vision: Qwen2-VL without rescale and normalize (uint8 pixel_values) is not supported")
	}
	if c.RescaleFactor != nil {
		n.rescale = *c.RescaleFactor
	}
	if !(n.rescale > 0) || math.IsInf(n.rescale, 0) {
		return nil, fmt.Errorf("vision: Qwen2-VL rescale_factor %v must be positive", n.rescale)
	}
	mean, std := c.ImageMean, c.ImageStd
	if mean == nil {
		mean = clipMean
	}
	if std == nil {
		std = clipStd
	}
	if len(mean) != 3 || len(std) != 3 {
		return nil, fmt.Errorf("vision: Qwen2-VL image_mean and image_std need 3 values, got %d and %d", len(mean), len(std))
	}
	for i := range 3 {
		if std[i] == 0 || math.IsNaN(std[i]) || math.IsNaN(mean[i]) {
			return nil, fmt.Errorf("vision: Qwen2-VL image_std %v or image_mean %v unusable", std, mean)
		}
	}
	copy(n.mean[:], mean)
	copy(n.std[:], std)
	q.fast = torchvisionLevels(n, dtype)
	q.slow = pilLevels(n, dtype)
	q.fastKernel = newLevelKernel(torchvisionAffine(n), &q.fast, dtype)
	q.slowKernel = newLevelKernel(pilAffine(n), &q.slow, dtype)
	return q, nil
}

// Plan runs smart_resize and derives the grid and the placeholder count.
func (q *qwen2VL) Plan(width, height int, kw Kwargs) (Plan, error) {
	if width <= 0 || height <= 0 {
		return Plan{}, &Error{Kind: InvalidImage, Message: fmt.Sprintf("image size %dx%d must be positive", width, height)}
	}
	minPixels, maxPixels := kw.pixelBounds(q.minPixels, q.maxPixels)
	rh, rw, err := smartResize(height, width, q.patch*q.merge, minPixels, maxPixels)
	if err != nil {
		return Plan{}, err
	}
	gh, gw := rh/q.patch, rw/q.patch
	return Plan{
		ResizedWidth: rw, ResizedHeight: rh,
		GridTHW:   [3]int{1, gh, gw},
		NumTokens: gh * gw / (q.merge * q.merge),
		Cols:      3 * q.temporal * q.patch * q.patch,
	}, nil
}

// Process resizes, normalises and patchifies img. pixel_values has shape
// [grid_t·grid_h·grid_w, 3·temporal·patch·patch]: rows in (t, h_block, w_block, h_in, w_in) order,
// columns in (channel, frame, py, px) order.
func (q *qwen2VL) Process(buf []byte, img imaging.RGB, kw Kwargs) (*Result, error) {
	f, err := wholeFrame(img)
	if err != nil {
		return nil, err
	}
	var res *Result
	err = q.resized(f, kw, false, func(plan Plan, pix []uint8, levels *[3]levelTable, kernel *levelKernel) error {
		n := q.pixelBytes(plan)
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		data := buf[:n]
		q.patchify(patchSink{dst: data}, pix, plan.ResizedWidth, levels, kernel)
		res = q.result(plan, data)
		return nil
	})
	return res, err
}

// ProcessTo is Process writing pixel_values to w in chunks of whole patches (patchify's order).
func (q *qwen2VL) ProcessTo(w io.Writer, img imaging.RGB, kw Kwargs) (*Result, error) {
	f, err := wholeFrame(img)
	if err != nil {
		return nil, err
	}
	var res *Result
	err = q.resized(f, kw, false, func(plan Plan, pix []uint8, levels *[3]levelTable, kernel *levelKernel) error {
		if err := q.patchify(patchSink{w: w}, pix, plan.ResizedWidth, levels, kernel); err != nil {
			return err
		}
		res = q.result(plan, nil)
		return nil
	})
	return res, err
}

// Prepare is ProcessTo up to the patches: the resized pixels are kept (in a buffer of the Prepared's
// own, or img's when no resize is needed) for Prepared.WriteTo.
func (q *qwen2VL) Prepare(img imaging.RGB, kw Kwargs) (*Prepared, error) {
	f, err := wholeFrame(img)
	if err != nil {
		return nil, err
	}
	return q.prepare(f, kw)
}

// PrepareData is imaging.Load then Prepare. An image imaging.OpenRows serves is decoded a batch of
// rows at a time straight into the resize, so the decoded image is never whole (6 MB less written
// to memory and read back for a 1080p JPEG); the result and the errors are
// the two calls', all found before it returns.
func (q *qwen2VL) PrepareData(data []byte, opt imaging.Options, kw Kwargs) (*Prepared, error) {
	rows, ok, err := imaging.OpenRows(data, opt)
	if err != nil {
		return nil, err
	}
	if !ok {
		img, err := imaging.Load(data, opt)
		if err != nil {
			return nil, err
		}
		return q.Prepare(*img, kw)
	}
	defer rows.Close()
	return q.prepare(frame{width: rows.Width, height: rows.Height, rows: rows}, kw)
}

func (q *qwen2VL) prepare(f frame, kw Kwargs) (*Prepared, error) {
	var p *Prepared
	err := q.resized(f, kw, true, func(plan Plan, pix []uint8, levels *[3]levelTable, kernel *levelKernel) error {
		p = &Prepared{Plan: plan, Len: q.pixelBytes(plan), dtype: q.dtype, write: func(w io.Writer) error {
			return q.patchify(patchSink{w: w}, pix, plan.ResizedWidth, levels, kernel)
		}}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

func (q *qwen2VL) pixelBytes(plan Plan) int {
	return plan.GridTHW[0] * plan.GridTHW[1] * plan.GridTHW[2] * plan.Cols * q.dtype.Size()
}

func (q *qwen2VL) result(plan Plan, data []byte) *Result {
	rows := plan.GridTHW[0] * plan.GridTHW[1] * plan.GridTHW[2]
	return &Result{Plan: plan, PixelValues: Tensor{DType: q.dtype, Shape: []int{rows, plan.Cols}, Data: data}}
}

// frame is an image to resize: its pixels whole, or (rows set) read in order from a decoder, whose
// errors are the image's load errors and come before any of the processor's.
type frame struct {
	width, height int
	pix           []uint8
	rows          *imaging.Rows
}

// wholeFrame is img as a frame, once its buffer is found to match its size.
func wholeFrame(img imaging.RGB) (frame, error) {
	if err := checkRGB(img); err != nil {
		return frame{}, err
	}
	return frame{width: img.Width, height: img.Height, pix: img.Pix}, nil
}

// resized plans f's processing, resizes it with the backend kw picks and runs patch on the resized
// pixels with that backend's tables and kernel. The resize writes into pooled scratch that goes back
// as resized returns, or, with own set, into scratch of the call's own: the pixels outlive the call.
func (q *qwen2VL) resized(f frame, kw Kwargs, own bool, patch func(plan Plan, pix []uint8, levels *[3]levelTable, kernel *levelKernel) error) error {
	plan, err := q.Plan(f.width, f.height, kw)
	if err != nil {
		if f.rows != nil {
			if lerr := f.rows.Finish(); lerr != nil {
				return lerr
			}
		}
		return err
	}
	var s *qwenScratch
	if !own {
		s, _ = q.scratch.Get().(*qwenScratch)
	}
	if s == nil {
		s = new(qwenScratch)
		s.resizer.UseTables(&q.tables)
	}
	if !own && max(f.width*f.height, plan.ResizedWidth*plan.ResizedHeight) <= keepScratchPixels {
		defer q.scratch.Put(s)
	}
	method, levels, kernel := resize.Torch, &q.fast, q.fastKernel
	if !kw.fast() {
		method, levels, kernel = resize.Pillow, &q.slow, q.slowKernel
	}
	rw, rh := plan.ResizedWidth, plan.ResizedHeight
	pix := f.pix
	if rw != f.width || rh != f.height || f.rows != nil {
		if cap(s.resized) < rw*rh*3 {
			s.resized = nozero.Bytes(rw * rh * 3) // the resize writes every byte
		}
		s.resized = s.resized[:rw*rh*3]
		if err := q.resize(s, f, rw, rh, method); err != nil {
			return err
		}
		pix = s.resized
	}
	return patch(plan, pix, levels, kernel)
}

// resize resizes f into s.resized (rw x rh). Rows' errors are returned as they are, load errors, and
// the rows the resize did not need are decoded for theirs.
func (q *qwen2VL) resize(s *qwenScratch, f frame, rw, rh int, method resize.Method) error {
	if f.rows == nil {
		if err := s.resizer.RGB(s.resized, rw, rh, f.pix, f.width, f.height, method); err != nil {
			return fmt.Errorf("vision: Qwen2-VL resize: %w", err)
		}
		return nil
	}
	var loadErr error
	next := func() ([]uint8, error) {
		row, err := f.rows.Next()
		loadErr = err
		return row, err
	}
	err := s.resizer.RGBRows(s.resized, rw, rh, next, f.width, f.height, method)
	if loadErr != nil {
		return loadErr
	}
	if err := f.rows.Finish(); err != nil {
		return err
	}
	if err != nil {
		return fmt.Errorf("vision: Qwen2-VL resize: %w", err)
	}
	return nil
}

// patchSink is where patchify puts the patches: into dst, the whole tensor, or, when w is set, in
// chunks of whole patches written to w.
type patchSink struct {
	dst []byte
	w   io.Writer
}

// sinkChunk is about how many bytes of patches patchify hands a writer at once: small enough to stay
// in the CPU's L2 cache for the writer to read, large enough that a call per chunk costs nothing.
const sinkChunk = 32 << 10

// patchify writes the patches of the resized RGB image (w wide) through the level tables: one pass
// that normalises, casts and orders; then the other frames of each temporal patch are copies of the
// first (the vector kernel writes the second itself). A non-nil kernel (the vector one, proven equal
// to levels) computes patches at least patchRowMin wide, a run of merge windows a call. Only an error
// from sink's writer is returned.
func (q *qwen2VL) patchify(sink patchSink, pix []uint8, w int, levels *[3]levelTable, kernel *levelKernel) error {
	P, M, T := q.patch, q.merge, q.temporal
	size := q.dtype.Size()
	gh, gw := len(pix)/(w*3)/P, w/P
	block := P * P * size // one channel of one frame
	channel := T * block  // one channel of the temporal patch
	window := M * M * 3 * channel
	vector := kernel != nil && P >= patchRowMin
	second := 0 // where the vector kernel writes each value again: the second frame, if any
	if T > 1 {
		second = block
	}
	var stage, chunk []byte
	switch {
	case sink.w != nil:
		// Patches are built in place in a chunk that stays in cache until the writer has read it.
		chunk = make([]byte, 0, max(1, sinkChunk/window)*window)
	case vector:
		// The vector path builds each window in a buffer that stays in L1 and streams it out (past
		// the caches where the CPU can), sparing the read of every output line before its write.
		stage = make([]byte, window)
	}
	o := 0
	for hb := range gh / M {
		for wb := 0; wb < gw/M; {
			wins := 1 // windows this step
			var out []byte
			switch {
			case chunk != nil:
				wins = min(gw/M-wb, (cap(chunk)-len(chunk))/window)
				out = chunk[len(chunk) : len(chunk)+wins*window]
			case vector:
				out = stage
			default:
				wins = gw/M - wb
				out = sink.dst[o : o+wins*window]
			}
			base := (hb*M*P*w + wb*M*P) * 3
			src := pix[base : base+(M*P-1)*w*3+wins*M*P*3]
			copied := 1 // frames of each channel written
			if vector {
				if patchWindows(out, channel, second, src, w*3, P, M, wins, levels, kernel) {
					copied = 2
				}
			} else {
				lookupWindows(out, channel, src, w*3, P, M, wins, levels, size)
			}
			for p := 0; p < len(out) && copied < T; p += 3 * channel {
				for c := range 3 {
					first := out[p+c*channel : p+c*channel+block]
					for f := copied; f < T; f++ {
						copy(out[p+c*channel+f*block:], first)
					}
				}
			}
			switch {
			case chunk != nil:
				chunk = chunk[:len(chunk)+len(out)]
				if cap(chunk)-len(chunk) < window {
					if _, err := sink.w.Write(chunk); err != nil {
						return err
					}
					chunk = chunk[:0]
				}
			case vector:
				streamOut(sink.dst[o:o+len(out)], out)
			}
			o += len(out)
			wb += wins
		}
	}
	if len(chunk) > 0 {
		if _, err := sink.w.Write(chunk); err != nil {
			return err
		}
	}
	return nil
}

// lookupWindows is patchWindows through the level tables, for values of size bytes: the patches of
// wins merge windows side by side, their first frames.
func lookupWindows(out []byte, channel int, src []uint8, stride, P, M, wins int, levels *[3]levelTable, size int) {
	for j := range wins * M * M {
		win, hi, wi := j/(M*M), j/M%M, j%M
		base := hi*P*stride + (win*M+wi)*P*3
		patch := out[j*3*channel:]
		for py := range P {
			row := src[base+py*stride : base+py*stride+3*P]
			lookupRow(patch[py*P*size:2*channel+(py+1)*P*size], channel, row, levels, size)
		}
	}
}

// lookupRow writes one row of a patch, P pixels of src, through the level tables: channel c's values
// at out[c*channel:], size bytes each.
func lookupRow(out []byte, channel int, src []uint8, levels *[3]levelTable, size int) {
	for c := range 3 {
		lut := &levels[c]
		if size == 2 {
			o := out[c*channel : c*channel+len(src)/3*2]
			// Two values a store: half the stores, which bound this loop.
			i, j := 0, c
			for ; j+3 < len(src); i, j = i+4, j+6 {
				binary.LittleEndian.PutUint32(o[i:], lut[src[j]]|lut[src[j+3]]<<16)
			}
			if j < len(src) {
				binary.LittleEndian.PutUint16(o[i:], uint16(lut[src[j]]))
			}
			continue
		}
		o := out[c*channel : c*channel+len(src)/3*4]
		for i, j := 0, c; j < len(src); i, j = i+4, j+3 {
			binary.LittleEndian.PutUint32(o[i:], lut[src[j]])
		}
	}
}

// smartResize is Hugging Face's smart_resize (transformers 4.5x/5.x, which processes images smaller
// than the factor): the size nearest h x w that is a multiple of factor in both dimensions, scaled
// into [minPixels, maxPixels] keeping the aspect ratio. float64 throughout and Python's round
// (half to even), as in Python.
func smartResize(h, w, factor, minPixels, maxPixels int) (int, int, error) {
	ratio := float64(max(h, w)) / float64(min(h, w))
	if ratio > 200 {
		return 0, 0, &Error{Kind: AspectRatio, Message: "absolute aspect ratio must be smaller than 200, got " + string(pyfmt.AppendFloatRepr(nil, ratio))}
	}
	f := float64(factor)
	hb := int(math.RoundToEven(float64(h)/f)) * factor
	wb := int(math.RoundToEven(float64(w)/f)) * factor
	switch {
	case hb*wb > maxPixels:
		if maxPixels <= 0 {
			return 0, 0, &Error{Kind: InvalidKwargs, Message: fmt.Sprintf("max_pixels must be positive, got %d", maxPixels)}
		}
		beta := math.Sqrt(float64(h*w) / float64(maxPixels))
		hb = max(factor, int(math.Floor(float64(h)/beta/f))*factor)
		wb = max(factor, int(math.Floor(float64(w)/beta/f))*factor)
	case hb*wb < minPixels:
		beta := math.Sqrt(float64(minPixels) / float64(h*w))
		hb = ceilTimes(float64(h)*beta/f, factor)
		wb = ceilTimes(float64(w)*beta/f, factor)
	}
	if hb <= 0 || wb <= 0 {
		return 0, 0, &Error{Kind: EmptyResize, Message: fmt.Sprintf("image of height %d and width %d resizes to %dx%d with max_pixels %d and min_pixels %d", h, w, hb, wb, maxPixels, minPixels)}
	}
	if hb > MaxResizedPixels/wb {
		return 0, 0, &Error{Kind: TooLarge, Message: fmt.Sprintf("image of height %d and width %d would be resized to %dx%d, more than %d pixels", h, w, hb, wb, MaxResizedPixels)}
	}
	return hb, wb, nil
}

// ceilTimes is math.ceil(x)*factor, saturating instead of overflowing for absurd min_pixels so that the
// size check after it can refuse the request.
func ceilTimes(x float64, factor int) int {
	c := math.Ceil(x)
	if c > MaxResizedPixels {
		return MaxResizedPixels * factor
	}
	return int(c) * factor
}
