package vision

import (
	"bytes"
	"errors"
	"testing"

	"github.com/vrender/vrender/imaging"
)

// FuzzSmartResize: any size and bounds either give a positive size, a multiple of the factor in both
// dimensions and within MaxResizedPixels, or a typed error — never a panic.
func FuzzSmartResize(f *testing.F) {
	f.Add(720, 1280, 28, 3136, 12845056)
	f.Add(14, 3000, 28, 3136, 12845056)
	f.Add(8, 8, 32, 65536, 16777216)
	f.Add(1, 1, 28, 0, 1)
	f.Add(100000, 1, 28, 1<<40, 1<<41)
	f.Fuzz(func(t *testing.T, h, w, factor, minPixels, maxPixels int) {
		if h <= 0 || w <= 0 || h > 1<<16 || w > 1<<16 || factor <= 0 || factor > 1<<10 || minPixels < 0 || maxPixels < 0 ||
			minPixels > 1<<53 || maxPixels > 1<<53 {
			return // outside what Plan can pass: imaging bounds images, kwargs are whole numbers below 2^53
		}
		rh, rw, err := smartResize(h, w, factor, minPixels, maxPixels)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Message == "" {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if rh <= 0 || rw <= 0 || rh%factor != 0 || rw%factor != 0 || rh*rw > MaxResizedPixels {
			t.Fatalf("%dx%d (factor %d, %d..%d) -> %dx%d", h, w, factor, minPixels, maxPixels, rh, rw)
		}
	})
}

// FuzzProcess runs whole requests: a small image and client kwargs. Every outcome is a result of the
// planned shape or a typed error, and ProcessTo and Prepare (with its WriteTo) write exactly Process's
// pixel values or fail as it fails.
func FuzzProcess(f *testing.F) {
	f.Add(uint8(56), uint8(30), []byte("seed"), []byte(`{}`))
	f.Add(uint8(1), uint8(200), []byte{0, 255}, []byte(`{"use_fast": false}`))
	f.Add(uint8(9), uint8(9), []byte{}, []byte(`{"min_pixels": 0, "max_pixels": 784}`))
	f.Add(uint8(30), uint8(2), []byte{1}, []byte(`{"size": {"shortest_edge": 100000, "longest_edge": 200000}}`))
	q := mustNew(f, qwen25Config, BFloat16)
	q3 := mustNew(f, qwen3Config, Float32)
	f.Fuzz(func(t *testing.T, w, h uint8, seed, rawKwargs []byte) {
		kw, err := ParseKwargs(rawKwargs)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("untyped kwargs error %v", err)
			}
			return
		}
		// Keep each run cheap: the fuzzer explores kwargs, not gigapixel outputs.
		if kw.MinPixels != nil && *kw.MinPixels > 1<<17 || kw.Size != nil && kw.Size.ShortestEdge > 1<<17 {
			return
		}
		img := imaging.RGB{Width: int(w), Height: int(h), Pix: make([]uint8, int(w)*int(h)*3)}
		for i := range img.Pix {
			if len(seed) > 0 {
				img.Pix[i] = seed[i%len(seed)] + uint8(i)
			}
		}
		for _, p := range []*qwen2VL{q, q3} {
			res, err := p.Process(nil, img, kw)
			if err != nil {
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("untyped error %v", err)
				}
				if _, perr := p.Prepare(img, kw); perr == nil || perr.Error() != err.Error() {
					t.Fatalf("Process failed with %v, Prepare with %v", err, perr)
				}
				continue
			}
			rows, cols := res.GridTHW[0]*res.GridTHW[1]*res.GridTHW[2], 3*p.temporal*p.patch*p.patch
			if len(res.PixelValues.Data) != rows*cols*p.dtype.Size() || res.NumTokens*p.merge*p.merge != rows || res.Cols != cols {
				t.Fatalf("result %+v does not match %d data bytes", res.Plan, len(res.PixelValues.Data))
			}
			if streamed := processTo(t, p, img, kw); !bytes.Equal(streamed.PixelValues.Data, res.PixelValues.Data) || streamed.Plan != res.Plan {
				t.Fatalf("ProcessTo differs from Process for %+v", res.Plan)
			}
		}
	})
}
