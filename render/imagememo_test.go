package render

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vrender/vrender/imaging"
	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/media"
	"github.com/vrender/vrender/vision"
)

func sharedImage(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.SharedDir(t), "multimodal", "images", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// memoURLs are data URLs that differ in small ways: texts that share all
// but their last bytes, one file under two media types, the scheme's case,
// broken base64 and truncated or foreign files.
func memoURLs(t testing.TB) map[string]string {
	png := sharedImage(t, "png_rgb_640x480.png")
	small := sharedImage(t, "png_rgb_56x30.png")
	b64 := base64.StdEncoding.EncodeToString(png)
	// The same file with its last bytes changed (a CRC then, still sized
	// from its header) and cut short: texts that are one another's prefix
	// or share all but a few characters.
	tail := append([]byte(nil), png...)
	tail[len(tail)-5] ^= 1
	return map[string]string{
		"png":          "data:image/png;base64," + b64,
		"png as jpeg":  "data:image/jpeg;base64," + b64,
		"png DATA":     "DATA:image/png;base64," + b64,
		"png tail":     "data:image/png;base64," + base64.StdEncoding.EncodeToString(tail),
		"png cut":      "data:image/png;base64," + base64.StdEncoding.EncodeToString(png[:len(png)/2]),
		"png cut 3":    "data:image/png;base64," + base64.StdEncoding.EncodeToString(png[:len(png)/2/3*3]),
		"small":        "data:image/png;base64," + base64.StdEncoding.EncodeToString(small),
		"jpeg":         "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(sharedImage(t, "jpeg_444_1280x720.jpg")),
		"bad base64":   "data:image/png;base64," + b64[:len(b64)-8] + "!!!!====",
		"random":       "data:image/png;base64," + base64.StdEncoding.EncodeToString(sharedImage(t, "invalid_random.png")),
		"not base64":   "data:image/png," + b64,
		"empty":        "data:image/png;base64,",
		"rgba":         "data:image/png;base64," + base64.StdEncoding.EncodeToString(sharedImage(t, "png_rgba_320x240.png")),
		"png uuid":     "data:image/png;base64," + b64 + "#u1",
		"png uuid too": "data:image/png;base64," + b64 + "#u2",
	}
}

// TestImageMemoAnswersAsUnmemoized is the memo's differential test: a
// request sequence that revisits each data URL under other kwargs, load
// options, uuids and return_mm_kwargs answers byte for byte as the uncached renderer, on a
// renderer with the memo, and on one whose cache is too small to keep an image (a memo hit that must
// decode the URL again).
func TestImageMemoAnswersAsUnmemoized(t *testing.T) {
	plain := imageRenderer(t, media.Config{}, uncached)
	memo := imageRenderer(t, media.Config{})
	tiny := imageRenderer(t, media.Config{}, func(c *ImageConfig) { c.CacheBytes = 64 << 10 })
	if memo.images.memo == nil || tiny.images.memo == nil || plain.images.memo != nil {
		t.Fatal("the memo is on exactly when the cache is")
	}
	urls := memoURLs(t)
	type req struct {
		kwargs, mediaIO string
		urls            []string
	}
	var reqs []req
	for _, kwargs := range []string{"", `{}`, `{"fps":2}`, `{"max_pixels":50000}`, `{ "max_pixels":50000}`, `{"model_id":1}`, `{"min_pixels":10,"max_pixels":5}`} {
		reqs = append(reqs,
			req{kwargs, "", []string{urls["png"], urls["small"]}},
			req{kwargs, "", []string{urls["png as jpeg"], urls["png DATA"], urls["png tail"]}},
			req{kwargs, "", []string{urls["png cut"]}},
			req{kwargs, "", []string{urls["png cut 3"], urls["png"]}},
			req{kwargs, "", []string{urls["png uuid"], urls["png uuid too"], urls["png"]}},
			req{kwargs, "", []string{urls["jpeg"], urls["rgba"]}},
			req{kwargs, `{"image":{"rgba_background_color":[0,0,0]}}`, []string{urls["rgba"], urls["png"]}},
		)
	}
	for _, bad := range []string{"bad base64", "random", "not base64", "empty"} {
		reqs = append(reqs, req{"", "", []string{urls["png"], urls[bad]}})
	}
	if testing.Short() {
		reqs = reqs[:14]
	}
	// Round 0 asks without mm kwargs (return_mm_kwargs false: sizes and
	// mm_hashes only, as llm-d's router asks: the memo notes a URL, keeps
	// it when a later request repeats it), round 1 with them, round 2
	// without them again (memo hits) and round 3 with them.
	for round := range 4 {
		for i, rq := range reqs {
			in := urlRequest(rq.kwargs, rq.urls...)
			if rq.mediaIO != "" {
				in.MediaIOKwargs = mustNode(rq.mediaIO)
			}
			in.OmitMMKwargs = round%2 == 0
			want := renderAnswer(t, plain, in)
			for name, r := range map[string]*Renderer{"memo": memo, "tiny cache": tiny} {
				if got := renderAnswer(t, r, in); got != want {
					j := testenv.FirstDiff([]byte(got), []byte(want))
					t.Fatalf("round %d request %d (%s): differs at byte %d: %.120q, unmemoized %.120q",
						round, i, name, j, got[max(0, j-20):], want[max(0, j-20):])
				}
			}
		}
	}
	for name, r := range map[string]*Renderer{"memo": memo, "tiny cache": tiny} {
		m := r.images.memo
		if n := m.lru.Len(); n == 0 || m.bytes() > m.max {
			t.Errorf("%s: %d entries, %d bytes (bound %d)", name, n, m.bytes(), m.max)
		}
	}
}

// TestURLMemo: a lookup confirms the whole key (a prefix or near key
// is a miss), entries are evicted least recently used first within the
// bound, and the memo keeps its own copy of a key's text.
func TestURLMemo(t *testing.T) {
	m := newURLMemo(3 * (memoEntryOverhead + 110)) // three entries of a 100-byte URL
	val := func(i int) memoValue { return memoValue{n: i, hash: fmt.Sprint(i), frame: []byte{1}} }
	buf := []byte("data:" + strings.Repeat("a", 95))
	k := func(s string) memoKey { return memoKey{url: s, aux: "x"} }
	put := func(k memoKey, v memoValue) { m.put(k, m.sum(k), v, true) }
	put(memoKey{url: string(buf), aux: "x"}, val(1))
	buf[6] = 'b' // the caller's bytes change; the memo's copy must not
	put(k("data:"+strings.Repeat("a", 94)), val(2))
	put(k("data:"+strings.Repeat("a", 93)+"b"), val(3))
	for _, tc := range []struct {
		key  memoKey
		want int
	}{
		{k("data:" + strings.Repeat("a", 95)), 1},
		{k(string(buf)), 0},
		{memoKey{url: "data:" + strings.Repeat("a", 95), aux: "y"}, 0},
		{k("data:" + strings.Repeat("a", 94)), 2},
		{k("data:" + strings.Repeat("a", 93)), 0},
		{k("data:" + strings.Repeat("a", 93) + "b"), 3},
	} {
		v, ok := m.get(tc.key, m.sum(tc.key))
		if ok != (tc.want != 0) || ok && v.n != tc.want {
			t.Errorf("get(%.12q…%d) = %v, %v; want %d", tc.key.url, len(tc.key.url), v.n, ok, tc.want)
		}
	}
	// 1 was used least recently: a fourth entry evicts it.
	get := func(k memoKey) bool { _, ok := m.get(k, m.sum(k)); return ok }
	get(k("data:" + strings.Repeat("a", 95)))
	put(k("data:"+strings.Repeat("c", 95)), val(4))
	if get(k("data:" + strings.Repeat("a", 94))) {
		t.Error("the least recently used entry was kept")
	}
	if !get(k("data:" + strings.Repeat("a", 95))) {
		t.Error("a recently used entry was evicted")
	}
	if m.bytes() > m.max || m.lru.Len() != 3 {
		t.Errorf("%d entries, %d bytes over the bound %d", m.lru.Len(), m.bytes(), m.max)
	}
	put(k(strings.Repeat("d", int(m.max))), val(5))
	if m.lru.Len() != 3 {
		t.Error("an entry larger than the bound was stored")
	}
	// A request without mm kwargs notes a URL seen first and keeps it the
	// second time.
	sighted := k("data:" + strings.Repeat("e", 95))
	for i, want := range []bool{false, false, true} {
		if got := get(sighted); got != want {
			t.Fatalf("sighting %d: hit %v, want %v", i, got, want)
		}
		if !want {
			m.put(sighted, m.sum(sighted), val(6), false)
		}
	}
	// Keys whose hashes collide are told apart by their text: a lookup
	// under another key's hash misses, and storing replaces.
	other := k("data:" + strings.Repeat("f", 95))
	if _, ok := m.get(other, m.sum(sighted)); ok {
		t.Error("a key was found under another key's hash")
	}
	m.put(other, m.sum(sighted), val(7), false)
	if v, ok := m.get(other, m.sum(sighted)); !ok || v.n != 7 {
		t.Errorf("a colliding key was not stored over a sighted one: %v %v", v.n, ok)
	}
	if get(sighted) {
		t.Error("the replaced key is still found")
	}
	// Kwargs without a text of their own, or whose text is not UTF-8, keep
	// a request out of the memo; absent and empty kwargs differ.
	opts := imaging.DefaultOptions()
	for _, n := range []*node{{Kind: wire.Object}, {Kind: wire.Object, Raw: []byte("{\"a\":\"\xff\"}")}} {
		if _, ok := memoAux(n, opts); ok {
			t.Errorf("memoAux(%q) is usable", n.Raw)
		}
	}
	if a, _ := memoAux(nil, opts); a == func() string { s, _ := memoAux(mustNode("{}"), opts); return s }() {
		t.Error("absent and empty kwargs share a memo key")
	}
	if newURLMemo(0) != nil {
		t.Error("a memo of no bytes is on")
	}
}

// FuzzImageMemo: for any data URL text and request kwargs, the size path
// answers through the memo as without it, on the first call and on a
// repeat.
//
// The fuzzer minimizes each input that reaches new code, trying about
// len²/2 shorter ones (about 200 µs each here, six size calls under
// coverage instrumentation), and reports no execs until it is done or
// its 60 s bound ends. A 5 KB seed (the 56x30 PNG) and kwargs grown to
// 3 KB of '[' (each level of nesting up to the parser's depth limit is
// new coverage) kept both workers minimizing for the whole bound, the run
// at 0 execs/s. So the seeds are files cut to their header (all the size
// path reads besides the hash) and longer texts reach no code: the memo
// keys on text, compared whole, and nothing in it depends on the length;
// the kwargs' parse is fuzzed on its own (FuzzParseJSONMatchesReference).
func FuzzImageMemo(f *testing.F) {
	for _, u := range memoURLs(f) {
		if len(u) < 400 {
			f.Add(u, "")
		}
	}
	// Headers: PNG's signature, IHDR and the next chunk's head, BMP's, and
	// JPEGs of their markers up to SOS without the tables (one with EXIF),
	// as Image.open identifies them. (GIF's color table and WebP's frame
	// make theirs longer than a memo check needs.)
	header := func(name string, spans ...[2]int) string {
		file := sharedImage(f, name)
		var b []byte
		for _, s := range spans {
			b = append(b, file[s[0]:s[1]]...)
		}
		return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b)
	}
	png := header("png_rgba_320x240.png", [2]int{0, 41})
	f.Add(png, "")
	f.Add(png, `{"fps":1}`)
	f.Add(png, `{"max_pixels":50000}`)
	f.Add(header("bmp_rgb_300x200.bmp", [2]int{0, 64}), `{"max_pixels":50000}`)
	f.Add(header("jpeg_444_1280x720.jpg", [2]int{0, 2}, [2]int{158, 177}, [2]int{609, 623}), `{"max_pixels":50000}`)
	f.Add(header("jpeg_exif_orient6_320x240.jpg", [2]int{0, 56}, [2]int{194, 213}, [2]int{645, 659}), "")
	plain := imageRenderer(f, media.Config{}, uncached)
	memo := imageRenderer(f, media.Config{})
	f.Fuzz(func(t *testing.T, url, kwargs string) {
		if len(url) > maxMemoFuzzURL || len(kwargs) > maxMemoFuzzKwargs {
			return
		}
		// Each input starts on an empty memo and empty file buffers: state
		// an earlier input left (its memo entry, a larger buffer) would
		// change the code this one reaches, which the fuzzer takes for new
		// coverage and minimizes.
		fresh := func(r *Renderer) *images {
			im := *r.images
			im.files = new(sync.Pool)
			if im.memo != nil {
				im.memo = newURLMemo(im.memo.max)
			}
			return &im
		}
		var reqKwargs *node
		if kwargs != "" {
			n, err := parseJSON([]byte(kwargs))
			if err != nil {
				return
			}
			reqKwargs = n
		}
		kw, err := vision.KwargsOf(reqKwargs)
		if err != nil {
			return
		}
		opts := imaging.DefaultOptions()
		size := func(im *images, withKwargs bool) string {
			var aux *string
			if a, ok := memoAux(reqKwargs, opts); ok && im.memo != nil {
				aux = &a
			}
			s, err := im.size(context.Background(), imageRef{url: url}, kw.Over(im.cfg.Kwargs), reqKwargs, opts, aux, withKwargs)
			if err != nil {
				return "error: " + err.Error()
			}
			return fmt.Sprint(s.plan, s.hash, s.cost)
		}
		want := size(fresh(plain), false)
		// A sighting, the second sight that stores it, a hit; then, on an
		// empty memo, a request with kwargs that stores at once, and a hit.
		im := fresh(memo)
		for i, withKwargs := range []bool{false, false, false, true, false} {
			if i == 3 {
				im.memo.lru.Clear()
			}
			if got := size(im, withKwargs); got != want {
				t.Fatalf("call %d: %q, unmemoized %q", i, got, want)
			}
		}
	})
}

// maxMemoFuzzURL and maxMemoFuzzKwargs bound FuzzImageMemo's inputs, so
// that minimizing one takes a few seconds.
const (
	maxMemoFuzzURL    = 256
	maxMemoFuzzKwargs = 128
)

// TestImageFileBufferAnswersAsFresh is the differential test of the
// reused file buffer: requests without mm kwargs, whose data URLs decode
// into one buffer request after request (larger files, then smaller and
// truncated ones over the stale bytes, broken base64), answer byte for
// byte as a renderer that decodes each into new storage, with the memo
// and without it.
func TestImageFileBufferAnswersAsFresh(t *testing.T) {
	urls := memoURLs(t)
	order := []string{"jpeg", "png", "small", "png cut", "png cut 3", "rgba", "bad base64", "png tail", "random",
		"small", "empty", "not base64", "png as jpeg", "png DATA", "png uuid", "jpeg", "small"}
	for _, edits := range [][]func(*ImageConfig){{uncached}, nil} {
		fresh := imageRenderer(t, media.Config{}, edits...)
		fresh.images.files = nil
		reused := imageRenderer(t, media.Config{}, edits...)
		if reused.images.files == nil {
			t.Fatal("no file buffers")
		}
		for round := range 2 {
			for i, name := range order {
				in := urlRequest("", urls[name])
				in.OmitMMKwargs = true
				if got, want := renderAnswer(t, reused, in), renderAnswer(t, fresh, in); got != want {
					j := testenv.FirstDiff([]byte(got), []byte(want))
					t.Fatalf("round %d request %d (%s): differs at byte %d: %.120q, fresh %.120q",
						round, i, name, j, got[max(0, j-20):], want[max(0, j-20):])
				}
			}
		}
	}
}
