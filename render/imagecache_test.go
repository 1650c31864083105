package render

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/imaging"
	"github.com/vrender/vrender/imgcache"
	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/media"
	"github.com/vrender/vrender/vision"
)

func uncached(c *ImageConfig) { c.CacheBytes = 0 }

// imageRequest is a chat request of the images' data URLs, in order; a
// name "file#id" gives its part the uuid "id".
func imageRequest(t testing.TB, kwargs string, names ...string) ChatInput {
	var urls []string
	for _, name := range names {
		file, id, ok := strings.Cut(name, "#")
		if ok {
			id = "#" + id
		}
		urls = append(urls, imageDataURL(t, file)+id)
	}
	return urlRequest(kwargs, urls...)
}

// urlRequest is a chat request of the image URLs, in order; a URL
// "url#id" gives its part the uuid "id" (a data URL holds no '#').
func urlRequest(kwargs string, urls ...string) ChatInput {
	var parts []string
	for _, u := range urls {
		uuid := ""
		if file, id, ok := strings.Cut(u, "#"); ok {
			u, uuid = file, `,"uuid":"`+id+`"`
		}
		parts = append(parts, `{"type":"image_url","image_url":{"url":"`+u+`"}`+uuid+`}`)
	}
	in := ChatInput{Messages: typedMessages([]json.RawMessage{json.RawMessage(`{"role":"user","content":[` +
		strings.Join(parts, ",") + `,{"type":"text","text":"What is shown?"}]}`)}), AddGenerationPrompt: true}
	if kwargs != "" {
		in.MMProcessorKwargs = mustNode(kwargs)
	}
	return in
}

// renderAnswer is what a render answer carries of a prompt: its token ids
// and its features JSON, or the error.
func renderAnswer(t testing.TB, r *Renderer, in ChatInput) string {
	t.Helper()
	p, err := r.RenderChat(context.Background(), in)
	if err != nil {
		return "error: " + err.Error()
	}
	ids, _ := json.Marshal(p.TokenIDs)
	if p.Features == nil {
		return string(ids)
	}
	return string(ids) + "\n" + string(p.Features.AppendJSON(nil))
}

// TestImageCacheAnswersAsUncached is the cache's differential test: over the
// whole corpus, and with kwargs that change the processed output, a cached
// renderer's first answer (a miss) and second (a hit) are byte for byte the
// uncached renderer's, failures included.
func TestImageCacheAnswersAsUncached(t *testing.T) {
	cached := imageRenderer(t, media.Config{})
	plain := imageRenderer(t, media.Config{}, uncached)
	entries, err := os.ReadDir(filepath.Join(testenv.SharedDir(t), "multimodal", "images"))
	if err != nil {
		t.Fatal(err)
	}
	type req struct {
		name   string
		kwargs string
		images []string
	}
	var reqs []req
	for _, e := range entries {
		if n := e.Name(); !strings.HasSuffix(n, ".py") {
			reqs = append(reqs, req{n, "", []string{n}})
		}
	}
	reqs = append(reqs,
		req{"max_pixels", `{"max_pixels":50000}`, []string{"png_rgba_320x240.png"}},
		req{"use_fast false", `{"use_fast":false}`, []string{"png_rgba_320x240.png"}},
		req{"min_pixels", `{"min_pixels":200000}`, []string{"png_rgba_320x240.png"}},
		req{"size", `{"size":{"shortest_edge":3136,"longest_edge":60000}}`, []string{"jpeg_444_1280x720.jpg"}},
		req{"same image twice and another", "", []string{"png_rgb_640x480.png", "png_rgb_640x480.png", "png_rgb_56x30.png"}},
		// A uuid replaces the bytes in the mm_hash, so these are keyed by
		// their bytes: the same uuid on two images, and an image seen
		// above without a uuid, then with two.
		req{"one uuid on two images", "", []string{"png_rgb_56x30.png#same", "png_rgb_640x480.png#same"}},
		req{"uuid, then another", "", []string{"png_rgb_56x30.png#a", "png_rgb_56x30.png#b"}},
		req{"uuid and kwargs", `{"max_pixels":50000}`, []string{"png_rgba_320x240.png#a", "png_rgb_56x30.png#a"}},
		// Request kwargs that change the mm_hash (its frame), not the
		// pixels, and kwargs that change both, on images seen above.
		req{"kwargs only the hash reads", `{"fps":2,"zz":[1]}`, []string{"png_rgb_56x30.png", "png_rgb_640x480.png"}},
		req{"empty kwargs", `{}`, []string{"png_rgb_56x30.png"}},
		req{"max_pixels and a hash-only kwarg", `{"max_pixels":50000,"a":null}`, []string{"png_rgba_320x240.png", "png_rgb_56x30.png#c"}},
	)
	if testing.Short() {
		reqs = reqs[len(reqs)-11:]
	}
	for _, rq := range reqs {
		t.Run(rq.name, func(t *testing.T) {
			in := imageRequest(t, rq.kwargs, rq.images...)
			want := renderAnswer(t, plain, in)
			before := cached.ImageCacheStats()
			for _, round := range []string{"miss", "hit"} {
				if got := renderAnswer(t, cached, in); got != want {
					i := testenv.FirstDiff([]byte(got), []byte(want))
					t.Fatalf("%s: cached answer differs at byte %d: %.120q, uncached %.120q", round, i, got[max(0, i-20):], want[max(0, i-20):])
				}
			}
			after := cached.ImageCacheStats()
			if !strings.HasPrefix(want, "error") && after.Hits == before.Hits {
				t.Errorf("no cache hit on the second render (stats %+v)", after)
			}
		})
	}
	if st := plain.ImageCacheStats(); st != (imgcache.Stats{}) {
		t.Errorf("the uncached renderer counted %+v", st)
	}
}

// TestImageCacheKeySeparates: each input that changes the processed output
// changes the key, and the key covers every field of the kwargs and the
// load options (a new field must be added to cacheKey, then here).
func TestImageCacheKeySeparates(t *testing.T) {
	if n := reflect.TypeFor[vision.Kwargs]().NumField(); n != 4 {
		t.Fatalf("vision.Kwargs has %d fields; cacheKey writes 4", n)
	}
	if n := reflect.TypeFor[imaging.Options]().NumField(); n != 2 {
		t.Fatalf("imaging.Options has %d fields; cacheKey writes 2", n)
	}
	r := imageRenderer(t, media.Config{})
	im := r.images
	// sized is an image as size gives it to the cache: its mm_hash and the
	// hash's frame (none with a uuid), under hasher h and the request's
	// mm_processor_kwargs.
	sized := func(h features.Hasher, data string, uuid *string, kwargs string) sizedImage {
		t.Helper()
		hash, frame, err := h.ImageHashFramed([]byte(data), uuid, kwargsNode([]byte(kwargs)))
		if err != nil {
			t.Fatal(err)
		}
		return sizedImage{data: []byte(data), hash: hash, frame: frame}
	}
	hasher := im.cfg.Hasher
	data := sized(hasher, "image bytes", nil, "")
	str := func(s string) *string { return &s }
	n := func(v int) *int { return &v }
	b := func(v bool) *bool { return &v }
	opts := imaging.DefaultOptions()
	variants := map[string]imgcache.Key{}
	add := func(name string, k imgcache.Key) {
		t.Helper()
		for other, ok := range variants {
			if ok == k {
				t.Errorf("%s has the key of %s", name, other)
			}
		}
		variants[name] = k
	}
	add("plain", im.cacheKey(data, vision.Kwargs{}, opts))
	add("other bytes", im.cacheKey(sized(hasher, "image bytez", nil, ""), vision.Kwargs{}, opts))
	add("one byte more", im.cacheKey(sized(hasher, "image bytes ", nil, ""), vision.Kwargs{}, opts))
	add("min_pixels", im.cacheKey(data, vision.Kwargs{MinPixels: n(1)}, opts))
	add("max_pixels", im.cacheKey(data, vision.Kwargs{MaxPixels: n(1)}, opts))
	add("max_pixels 0", im.cacheKey(data, vision.Kwargs{MaxPixels: n(0)}, opts))
	add("size", im.cacheKey(data, vision.Kwargs{Size: &vision.SizeBounds{ShortestEdge: 1, LongestEdge: 2}}, opts))
	add("size swapped", im.cacheKey(data, vision.Kwargs{Size: &vision.SizeBounds{ShortestEdge: 2, LongestEdge: 1}}, opts))
	add("use_fast true", im.cacheKey(data, vision.Kwargs{UseFast: b(true)}, opts))
	add("use_fast false", im.cacheKey(data, vision.Kwargs{UseFast: b(false)}, opts))
	add("background", im.cacheKey(data, vision.Kwargs{}, imaging.Options{MaxPixels: opts.MaxPixels, Background: [3]uint8{0, 0, 0}}))
	add("max image pixels", im.cacheKey(data, vision.Kwargs{}, imaging.Options{MaxPixels: 5, Background: opts.Background}))
	other := *im
	other.procDigest = processorDigest([]byte(`{}`), vision.Float16)
	add("processor", other.cacheKey(data, vision.Kwargs{}, opts))
	// The mm_hash and its frame stand for the bytes: what changes the
	// frame (the model id, the algorithm, the request's kwargs) changes
	// the key too, and an image with a uuid is keyed by its bytes.
	add("model id", im.cacheKey(sized(features.Hasher{ModelID: "other"}, "image bytes", nil, ""), vision.Kwargs{}, opts))
	add("sha256", im.cacheKey(sized(features.Hasher{ModelID: hasher.ModelID, Algorithm: features.SHA256}, "image bytes", nil, ""), vision.Kwargs{}, opts))
	add("request kwargs", im.cacheKey(sized(hasher, "image bytes", nil, `{"max_pixels":50000}`), vision.Kwargs{}, opts))
	add("uuid", im.cacheKey(sized(hasher, "image bytes", str("u"), ""), vision.Kwargs{}, opts))
	add("uuid other bytes", im.cacheKey(sized(hasher, "image bytez", str("u"), ""), vision.Kwargs{}, opts))
	add("uuid, bytes that are the plain frame", im.cacheKey(sizedImage{data: data.frame, hash: "u"}, vision.Kwargs{}, opts))
	if im.cacheKey(sized(hasher, "image bytes", str("v"), `{"max_pixels":50000}`), vision.Kwargs{}, opts) != variants["uuid"] {
		t.Error("an image with a uuid is not keyed by its bytes alone")
	}
	if im.cacheKey(data, vision.Kwargs{}, opts) != variants["plain"] {
		t.Error("the key is not a function of its inputs")
	}
	if processorDigest([]byte(`{}`), vision.BFloat16) == processorDigest([]byte(`{}`), vision.Float16) {
		t.Error("the dtype does not enter the processor digest")
	}
}

// TestImageCacheEvictsWithinBound: a cache smaller than two images keeps
// answering as the uncached path while it evicts, and holds no more than
// its bound.
func TestImageCacheEvictsWithinBound(t *testing.T) {
	// png_rgb_640x480 is 644x476 after smart_resize: the cache holds its
	// resized RGB pixels.
	one := 644*476*3 + imgcache.EntryOverhead
	bound := int64(one + one/2)
	cached := imageRenderer(t, media.Config{}, func(c *ImageConfig) { c.CacheBytes = bound })
	plain := imageRenderer(t, media.Config{}, uncached)
	a := imageRequest(t, "", "png_rgb_640x480.png")
	b := imageRequest(t, `{"max_pixels":300000}`, "png_rgb_640x480.png")
	wantA, wantB := renderAnswer(t, plain, a), renderAnswer(t, plain, b)
	for i := range 3 {
		if renderAnswer(t, cached, a) != wantA || renderAnswer(t, cached, b) != wantB {
			t.Fatalf("round %d: a cached answer differs from the uncached one", i)
		}
		if st := cached.ImageCacheStats(); st.Bytes > bound || st.Entries > 1 {
			t.Fatalf("round %d: %+v over the bound %d", i, st, bound)
		}
	}
	st := cached.ImageCacheStats()
	if st.Entries != 1 || st.Evictions != 5 || st.Hits != 0 {
		t.Fatalf("stats %+v: want one entry, 5 evictions, no hits", st)
	}
	if renderAnswer(t, cached, b) != wantB || cached.ImageCacheStats().Hits != 1 {
		t.Fatalf("the last image was not a hit: %+v", cached.ImageCacheStats())
	}
}

// TestImageCacheEntriesOwnTheirBytes: misses reuse one pixel buffer, so
// an entry that aliased it would change with the next miss; hits after
// other misses still answer as the uncached path.
func TestImageCacheEntriesOwnTheirBytes(t *testing.T) {
	cached := imageRenderer(t, media.Config{})
	plain := imageRenderer(t, media.Config{}, uncached)
	names := []string{"png_rgb_640x480.png", "jpeg_444_1280x720.jpg", "png_rgb_56x30.png"}
	want := map[string]string{}
	for _, name := range names {
		want[name] = renderAnswer(t, plain, imageRequest(t, "", name))
		if renderAnswer(t, cached, imageRequest(t, "", name)) != want[name] {
			t.Fatalf("%s: the miss differs from the uncached answer", name)
		}
	}
	for _, name := range names {
		if renderAnswer(t, cached, imageRequest(t, "", name)) != want[name] {
			t.Fatalf("%s: the hit after other misses differs from the uncached answer", name)
		}
	}
	if st := cached.ImageCacheStats(); st.Misses != 3 || st.Hits != 3 {
		t.Fatalf("stats %+v, want 3 misses and 3 hits", st)
	}
}

// TestImageCacheConcurrentSameImage: concurrent requests for one image
// process it once and all answer as the uncached path.
func TestImageCacheConcurrentSameImage(t *testing.T) {
	cached := imageRenderer(t, media.Config{})
	in := imageRequest(t, "", "jpeg_444_1280x720.jpg")
	want := renderAnswer(t, imageRenderer(t, media.Config{}, uncached), in)
	const n = 6
	var wg sync.WaitGroup
	got := make([]string, n)
	for i := range n {
		wg.Go(func() { got[i] = renderAnswer(t, cached, in) })
	}
	wg.Wait()
	for i, g := range got {
		if g != want {
			t.Fatalf("request %d differs from the uncached answer", i)
		}
	}
	if st := cached.ImageCacheStats(); st.Misses != 1 || st.Hits != n-1 {
		t.Fatalf("stats %+v, want 1 miss and %d hits", st, n-1)
	}
}

// BenchmarkImageCache renders a two-screenshot request (what an agent
// re-sends each turn) with the cache warm and with it off: the difference
// is the decoding and processing a hit saves; what a hit still costs is the
// fetch (here data: URLs), the hashes and the features.
func BenchmarkImageCache(b *testing.B) {
	in := imageRequest(b, "", "jpeg_444_1280x720.jpg", "png_rgb_640x480.png")
	for _, bc := range []struct {
		name  string
		edits []func(*ImageConfig)
	}{{"hit", nil}, {"off", []func(*ImageConfig){uncached}}} {
		b.Run(bc.name, func(b *testing.B) {
			r := imageRenderer(b, media.Config{}, bc.edits...)
			if _, err := r.RenderChat(context.Background(), in); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				p, err := r.RenderChat(context.Background(), in)
				if err != nil {
					b.Fatal(err)
				}
				p.Features.AppendJSON(nil)
			}
		})
	}
}
