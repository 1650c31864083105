package render

import (
	"context"
	"encoding/binary"
	"sync"

	"github.com/zeebo/blake3"

	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/imaging"
	"github.com/vrender/vrender/imgcache"
	"github.com/vrender/vrender/vision"
)

// DefaultImageCacheBytes is --mm-processor-cache-gb's default, vLLM's 4 GiB.
const DefaultImageCacheBytes = 4 << 30

// processedImage is one image's processor output: its entry, shared by
// every request that hits it in the cache.
type processedImage struct {
	entry     *imageEntry
	numTokens int
	cols      int
}

// imageEntry is an image resized for its processor whose pixel values are
// made while an answer is written (features.PendingPixels), straight to
// the connection a chunk at a time. A cached entry keeps the base64 of its
// item's pixel values once an answer has written them whole, so that every
// later hit splices them in without encoding megabytes again.
//
// The first answer to write a cached entry claims that base64: it encodes
// each chunk into the entry's own buffer, writes it to its client, and
// publishes the buffer when the item is written whole. A request that hits
// the entry meanwhile does not wait for that client, however slow: it
// makes the pixel values from the resized image itself, into a chunk
// buffer of its own. An answer that fails (its client went away) gives the
// claim back to the next one. Once the base64 is kept and the last write
// reading the resized pixels has ended, they go back to the processor's
// pool (a write that begins later writes the kept base64).
type imageEntry struct {
	grid  [3]int64
	dtype string
	// pixels is the bytes of pixel_values; encodedLen their item's
	// base64 as kept (the cache charges it from the start).
	pixels, encodedLen int
	cached             bool

	mu      sync.Mutex
	prep    *vision.Prepared        // nil once released
	encoded *features.EncodedPixels // nil until an answer kept it
	filling bool                    // an answer is keeping it
	readers int                     // writes reading prep
}

// newImageEntry is the entry of prep; a cached one keeps its base64.
func newImageEntry(prep *vision.Prepared, dtype string, cached bool) *imageEntry {
	e := &imageEntry{grid: [3]int64{int64(prep.GridTHW[0]), int64(prep.GridTHW[1]), int64(prep.GridTHW[2])},
		dtype: dtype, pixels: prep.Len, cached: cached, prep: prep}
	e.encodedLen = features.QwenImage{GridTHW: e.grid, DType: dtype}.EncodedPixelsLen(prep.Cols, prep.Len)
	return e
}

// image is the entry as an answer's image: its kept base64, or its pixel
// values to make as the answer is written.
func (e *imageEntry) image() features.QwenImage {
	e.mu.Lock()
	defer e.mu.Unlock()
	img := features.QwenImage{GridTHW: e.grid, DType: e.dtype}
	if e.encoded != nil {
		img.Encoded = e.encoded
		return img
	}
	img.Pending = &features.PendingPixels{Len: e.pixels, Begin: e.begin}
	return img
}

// begin starts a write of the entry: from its kept base64 if there is
// some by now, else from the resized pixels, keeping the base64 when
// cached and no other write is keeping it.
func (e *imageEntry) begin() features.PixelWrite {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.encoded != nil {
		return features.PixelWrite{Kept: e.encoded}
	}
	e.readers++
	w := features.PixelWrite{Source: e.prep, End: e.end}
	if e.cached && !e.filling {
		e.filling = true
		w.Keep = e.keep
	}
	return w
}

// keep ends the claiming write: enc is its base64, nil when it failed.
func (e *imageEntry) keep(enc *features.EncodedPixels) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.filling = false
	if enc != nil {
		e.encoded = enc
	}
}

// end ends a write that read the resized pixels; the last one after the
// base64 is kept releases them.
func (e *imageEntry) end() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.readers--
	if e.readers == 0 && e.encoded != nil && e.prep != nil {
		e.prep.Release()
		e.prep = nil
	}
}

// imageCacheKeyVersion changes whenever the key's layout or what a cached
// value holds changes.
const imageCacheKeyVersion = "vrender processed image v3"

// processorDigest names a processor for the cache key: its
// preprocessor_config.json and the dtype pixel_values are cast to.
func processorDigest(preprocessorConfig []byte, dtype vision.DType) [32]byte {
	h := blake3.New()
	writeField(h, []byte(imageCacheKeyVersion))
	writeField(h, preprocessorConfig)
	writeField(h, []byte(dtype.String()))
	var d [32]byte
	h.Sum(d[:0])
	return d
}

// cacheKey is the digest of everything that decides an image's processed
// output: the processor, the image's bytes, the merged processor kwargs and
// the load options. It is not the mm_hash alone: with a uuid the mm_hash
// is the uuid alone, its byte stream is not length-prefixed (a file's tail
// can pose as a kwarg), and neither --mm-processor-kwargs nor
// media_io_kwargs enter it, so two different outputs could share one.
//
// The image's bytes enter as the mm_hash and its frame when the hash
// covers them (img.frame, features.Hasher.ImageHashFramed: equal frame
// and hash mean equal bytes, up to a collision of the hash), which saves
// hashing a screenshot's megabytes twice; else (a uuid) as the bytes
// themselves. A tag byte keeps the two forms apart.
func (im *images) cacheKey(img sizedImage, kw vision.Kwargs, opts imaging.Options) imgcache.Key {
	h := blake3.New()
	h.Write(im.procDigest[:])
	var b []byte
	for _, p := range []*int{kw.MinPixels, kw.MaxPixels} {
		b = appendOptInt(b, p)
	}
	if kw.Size != nil {
		b = append(b, 1)
		b = binary.LittleEndian.AppendUint64(b, uint64(kw.Size.ShortestEdge))
		b = binary.LittleEndian.AppendUint64(b, uint64(kw.Size.LongestEdge))
	} else {
		b = append(b, 0)
	}
	switch {
	case kw.UseFast == nil:
		b = append(b, 0)
	case *kw.UseFast:
		b = append(b, 1)
	default:
		b = append(b, 2)
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(opts.MaxPixels))
	b = append(b, opts.Background[:]...)
	if img.frame != nil {
		writeField(h, append(b, 1))
		writeField(h, img.frame)
		writeField(h, []byte(img.hash))
	} else {
		writeField(h, append(b, 0))
		writeField(h, img.data)
	}
	var k imgcache.Key
	h.Sum(k[:0])
	return k
}

func appendOptInt(b []byte, p *int) []byte {
	if p == nil {
		return append(b, 0)
	}
	return binary.LittleEndian.AppendUint64(append(b, 1), uint64(*p))
}

// writeField writes b length-prefixed, so that no two field lists share a
// byte stream.
func writeField(h *blake3.Hasher, b []byte) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}

// process decodes one image's bytes and resizes it for its processor, or
// finds it in the cache: everything that can fail, so that the answer's
// status is known before its pixel values are made. Failures are the
// answers imageError gives, the same for every request that waited on the
// same fill.
func (im *images) process(ctx context.Context, img sizedImage, kw vision.Kwargs, opts imaging.Options) (processedImage, error) {
	fill := func() (processedImage, int64, error) {
		// A client that went away stops the work here (decoding and
		// resizing, one pass, run to the end).
		if err := ctx.Err(); err != nil {
			return processedImage{}, 0, err
		}
		data := img.data
		if data == nil { // sized from the memo (imagememo.go)
			var err error
			if data, err = im.cfg.Fetcher.Fetch(ctx, img.url); err != nil {
				return processedImage{}, 0, imageError(err)
			}
		}
		prep, err := im.proc.PrepareData(data, opts, kw)
		if err != nil {
			return processedImage{}, 0, imageError(err)
		}
		e := newImageEntry(prep, im.dtype.String(), im.cache != nil)
		return processedImage{entry: e, numTokens: prep.NumTokens, cols: prep.Cols}, int64(e.encodedLen), nil
	}
	if im.cache == nil {
		p, _, err := fill()
		return p, err
	}
	p, _, err := im.cache.Do(ctx, im.cacheKey(img, kw, opts), fill)
	return p, err
}

// ImageCacheStats reports the processed-image cache's counters (zero when
// the model takes no images or the cache is off).
func (r *Renderer) ImageCacheStats() imgcache.Stats {
	if r.images == nil {
		return imgcache.Stats{}
	}
	return r.images.cache.Stats()
}
