package render

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
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

// TestImageCacheEvictsWhileWritten: answers written while other requests
// hit and evict their images' entries, and answers rendered before their
// entry was evicted and written after, are the uncached answers byte for
// byte (under -race, no write reads pixels another request changes).
func TestImageCacheEvictsWhileWritten(t *testing.T) {
	names := []string{"png_rgb_640x480.png", "jpeg_444_1280x720.jpg", "png_rgb_333x517.png"}
	plain := imageRenderer(t, media.Config{}, uncached)
	want := map[string][]byte{}
	for _, n := range names {
		p, err := plain.RenderChat(StreamedAnswer(context.Background()), imageRequest(t, "", n))
		if err != nil {
			t.Fatal(err)
		}
		want[n] = streamed(t, p)
	}
	// Room for the largest image and a little: every new image evicts.
	bound := int64(1288*728*3 + 1<<16)
	cached := imageRenderer(t, media.Config{}, func(c *ImageConfig) { c.CacheBytes = bound })
	render := func(n string) *ChatPrompt {
		p, err := cached.RenderChat(StreamedAnswer(context.Background()), imageRequest(t, "", n))
		if err != nil {
			t.Error(err)
		}
		return p
	}
	check := func(what, n string, p *ChatPrompt) {
		if p == nil {
			return
		}
		if got := streamed(t, p); !bytes.Equal(got, want[n]) {
			t.Errorf("%s %s: differs from the uncached answer at byte %d", what, n, testenv.FirstDiff(got, want[n]))
		}
	}
	// Rendered while cached, written after its entry was evicted.
	early := render(names[0])
	render(names[0]) // a hit
	check("evicted before written", names[1], render(names[1]))
	runtime.GC()
	render(names[2]) // a miss allocating where collected pixels were
	check("written after its entry was evicted", names[0], early)

	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 6 {
				n := names[(g+i)%len(names)]
				p := render(n)
				// Another image in between: the entry may be gone when p
				// is written.
				render(names[(g+i+1)%len(names)])
				// Evicted pixels nothing holds are collected now.
				runtime.GC()
				check("concurrent", n, p)
			}
		})
	}
	wg.Wait()
	st := cached.ImageCacheStats()
	if st.Evictions == 0 || st.Hits == 0 || st.Bytes > bound {
		t.Fatalf("stats %+v: want hits and evictions within %d bytes", st, bound)
	}
}
