package render

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/imaging"
	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/media"
	"github.com/vrender/vrender/vision"
)

// bufferedFeatures is the features JSON of p's images made the buffered
// way, the slow side of the streamed answer: each image decoded and run
// through the whole processor into one pixel_values tensor
// (vision.Processor.Process), its item built from that tensor and the JSON
// appended into one buffer. The hashes and placeholders are p's.
func bufferedFeatures(t *testing.T, r *Renderer, p *ChatPrompt, kw vision.Kwargs, names ...string) []byte {
	t.Helper()
	m := p.Features.Modalities[0]
	imgs := make([]features.Image, len(names))
	cols := 0
	for i, name := range names {
		rgb, err := imaging.Load(sharedImage(t, name), r.images.cfg.Load)
		if err != nil {
			t.Fatal(err)
		}
		res, err := r.images.proc.Process(nil, *rgb, kw.Over(r.images.cfg.Kwargs))
		if err != nil {
			t.Fatal(err)
		}
		g := res.GridTHW
		imgs[i] = features.Image{Hash: m.Hashes[i], Placeholder: m.Placeholders[i], Processed: features.QwenImage{
			GridTHW: [3]int64{int64(g[0]), int64(g[1]), int64(g[2])}, PixelValues: res.PixelValues.Data, DType: res.PixelValues.DType.String()}}
		cols = res.Cols
	}
	f, err := features.QwenImageFeatures(imgs, cols, features.Options{Kwargs: true})
	if err != nil {
		t.Fatal(err)
	}
	return f.AppendJSON(nil)
}

// streamed is p's features JSON as the server writes it: spliced into a
// body whose pending pixel values are made and encoded a chunk at a time
// as it is written.
func streamed(t *testing.T, p *ChatPrompt) []byte {
	t.Helper()
	var body wire.Body
	body.B = p.Features.AppendBody(nil, &body)
	var out bytes.Buffer
	if n, err := body.WriteTo(&out); err != nil || int(n) != body.Len() {
		t.Fatalf("writing the body: %d of %d bytes, %v", n, body.Len(), err)
	}
	return out.Bytes()
}

// TestStreamedImagesAsBuffered is the differential test of answers whose
// pixel values are made while they are written against the buffered path
// (bufferedFeatures): over every decodable corpus image alone and requests
// of four, with the cache off, and on for a miss, a hit and a request
// mixing cached and new images, the streamed JSON and the copied one
// (AppendJSON, the engine path's) are the buffered JSON byte for byte.
func TestStreamedImagesAsBuffered(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join(testenv.SharedDir(t), "multimodal", "images"))
	if err != nil {
		t.Fatal(err)
	}
	type req struct {
		kwargs string
		names  []string
	}
	var reqs []req
	for _, e := range entries {
		n := e.Name()
		if strings.HasSuffix(n, ".py") || strings.HasPrefix(n, "invalid_") || strings.Contains(n, "ratio") {
			continue
		}
		kwargs := ""
		if strings.Contains(n, "4608") || strings.Contains(n, "5120") {
			// Their default resize is 150 MB of base64: a smaller one
			// covers the same path.
			kwargs = `{"max_pixels":2000000}`
		}
		reqs = append(reqs, req{kwargs, []string{n}})
	}
	four := []string{"jpeg_444_1280x720.jpg", "png_rgb_56x30.png", "webp_lossy_512x384.webp", "png_rgb_333x517.png"}
	reqs = append(reqs, req{"", four}, req{`{"max_pixels":300000}`, four})
	if testing.Short() {
		reqs = reqs[len(reqs)-6:]
	}
	plain := imageRenderer(t, media.Config{}, uncached)
	for _, rq := range reqs {
		name := strings.Join(rq.names, "+") + rq.kwargs
		t.Run(name, func(t *testing.T) {
			cached := imageRenderer(t, media.Config{})
			in := imageRequest(t, rq.kwargs, rq.names...)
			var kw vision.Kwargs
			if rq.kwargs != "" {
				if kw, err = vision.KwargsOf(mustNode(rq.kwargs)); err != nil {
					t.Fatal(err)
				}
			}
			var want []byte
			check := func(what string, r *Renderer) {
				t.Helper()
				p, err := r.RenderChat(StreamedAnswer(context.Background()), in)
				if err != nil {
					t.Fatal(err)
				}
				if want == nil {
					want = bufferedFeatures(t, r, p, kw, rq.names...)
				}
				for _, got := range [][]byte{streamed(t, p), p.Features.AppendJSON(nil)} {
					if !bytes.Equal(got, want) {
						i := testenv.FirstDiff(got, want)
						t.Fatalf("%s: %d bytes, buffered %d; first difference at %d", what, len(got), len(want), i)
					}
				}
			}
			check("uncached", plain)
			if len(rq.names) > 1 {
				// Half the images cached by a request of their own first.
				for _, n := range rq.names[:len(rq.names)/2] {
					if _, err := cached.RenderChat(context.Background(), imageRequest(t, rq.kwargs, n)); err != nil {
						t.Fatal(err)
					}
				}
				check("half cached", cached)
			}
			check("miss", cached)
			check("hit", cached)
		})
	}
}

// TestImageEntryClaim: one answer at a time keeps a cached entry's base64;
// the others, meanwhile, make their own pixel values and answer the same;
// a failed answer gives the claim back; once one has kept the base64 every
// answer writes it, and the resized pixels go back to the pool when the
// last write reading them ends. An uncached entry keeps nothing.
func TestImageEntryClaim(t *testing.T) {
	r := imageRenderer(t, media.Config{})
	rgb, err := imaging.Load(sharedImage(t, "png_rgb_640x480.png"), r.images.cfg.Load)
	if err != nil {
		t.Fatal(err)
	}
	prepare := func() *vision.Prepared {
		prep, err := r.images.proc.Prepare(*rgb, r.images.cfg.Kwargs)
		if err != nil {
			t.Fatal(err)
		}
		return prep
	}
	cols := prepare().Cols
	item := func(e *imageEntry) *features.Features {
		f, err := features.QwenImageFeatures([]features.Image{{Hash: "h", Placeholder: features.Placeholder{Length: 1}, Processed: e.image()}},
			cols, features.Options{Kwargs: true})
		if err != nil {
			t.Fatal(err)
		}
		return &f
	}
	plain := newImageEntry(prepare(), r.images.dtype.String(), false)
	want := item(plain).AppendJSON(nil)
	for range 2 {
		if got := streamedFeatures(t, item(plain)); !bytes.Equal(got, want) || plain.encoded != nil || plain.prep == nil {
			t.Fatal("an uncached entry kept its base64 or lost its pixels")
		}
	}

	e := newImageEntry(prepare(), r.images.dtype.String(), true)
	pending := item(e) // built before the fill: it will write the kept base64
	if got := item(e).AppendJSON(nil); !bytes.Equal(got, want) {
		t.Fatal("the filling answer differs")
	}
	if e.encoded == nil || e.prep != nil || e.filling || e.readers != 0 {
		t.Fatalf("after a whole write: encoded %v, prep %v, filling %v, readers %d", e.encoded != nil, e.prep != nil, e.filling, e.readers)
	}
	if e.encodedLen != e.encoded.Len() {
		t.Fatalf("the cache was charged %d bytes for %d kept", e.encodedLen, e.encoded.Len())
	}
	if !bytes.Equal(streamedFeatures(t, pending), want) {
		t.Fatal("an answer built before the fill and written after it differs")
	}
	if hit := e.image(); hit.Encoded != e.encoded || hit.Pending != nil {
		t.Fatal("a hit after the fill does not splice the kept base64")
	}

	e = newImageEntry(prepare(), r.images.dtype.String(), true)
	claim := e.begin()
	if claim.Keep == nil || claim.Source == nil {
		t.Fatal("the first write of a cached entry does not claim it")
	}
	// While one answer keeps the entry, others answer without waiting and
	// without keeping, side by side.
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if !bytes.Equal(streamedFeatures(t, item(e)), want) {
				t.Error("an answer during another's fill differs")
			}
		})
	}
	wg.Wait()
	if e.encoded != nil || !e.filling || e.readers != 1 {
		t.Fatalf("an answer that was not the claim's kept the base64 (readers %d)", e.readers)
	}
	claim.Keep(nil) // the claiming answer failed
	claim.End()
	if e.filling || e.prep == nil || e.readers != 0 {
		t.Fatal("a failed fill kept its claim or dropped the pixels")
	}
	if got := streamedFeatures(t, item(e)); !bytes.Equal(got, want) || e.encoded == nil || e.prep != nil {
		t.Fatal("the next answer after a failed fill did not fill the entry")
	}
}

func streamedFeatures(t *testing.T, f *features.Features) []byte {
	t.Helper()
	return streamed(t, &ChatPrompt{Features: f})
}
