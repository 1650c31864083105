package render

import (
	"context"
	"encoding/binary"

	"github.com/zeebo/blake3"

	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/imaging"
	"github.com/vrender/vrender/imgcache"
	"github.com/vrender/vrender/vision"
)

// DefaultImageCacheBytes is --mm-processor-cache-gb's default, vLLM's 4 GiB.
const DefaultImageCacheBytes = 4 << 30

// processedImage is one image's processor output, shared by every request
// that hits it in the cache: the image resized for its processor, whose
// pixel values every answer makes as it is written (features.PendingPixels),
// straight to the connection a chunk at a time, a hit as a miss does.
//
// The cache keeps the resized pixels (3 bytes a pixel), not the base64 of
// the pixel values made from them (16 bytes a pixel in bf16), which it
// kept before: making them again costs a hit ~0.5 ms of patchify and
// base64 for a 1280x720 picture (AVX-512), of which the socket's cheaper
// copy of chunks still in cache pays back some (+0.3-0.4 ms of server CPU
// per hit measured, 3.8-4.9 ms before), while keeping 5.3 times the bytes
// cost every new picture 15 MB of pages touched for the first time while
// the cache filled (3,700 page faults: 15-23 ms, up to 37, instead of
// 10-11 per new 1280x720 JPEG on the dev VM), and held 5.3 times fewer
// pictures.
//
// A cached image's pixels are its own (vision.Prepared's), never given
// back to the processor's pool: an answer may read them at any time,
// during its hit or long after the cache evicted the entry; they go to the
// garbage collector with the last reference, as an uncached image's do. (Giving them back once the
// collector finds them unreachable, runtime.AddCleanup, was measured
// worse: more page faults and a larger heap, the pool being emptied at
// every collection.)
type processedImage struct {
	image     features.QwenImage
	numTokens int
	cols      int
}

// newProcessedImage is prep as an answer's image.
func newProcessedImage(prep *vision.Prepared, dtype string) processedImage {
	img := features.QwenImage{GridTHW: [3]int64{int64(prep.GridTHW[0]), int64(prep.GridTHW[1]), int64(prep.GridTHW[2])}, DType: dtype,
		Pending: &features.PendingPixels{Len: prep.Len, Source: prep}}
	return processedImage{image: img, numTokens: prep.NumTokens, cols: prep.Cols}
}

// resizedBytes is what a processed image of plan holds: its resized RGB
// pixels (the cache's charge for it).
func resizedBytes(plan vision.Plan) int64 {
	return int64(plan.ResizedWidth) * int64(plan.ResizedHeight) * 3
}

// imageCacheKeyVersion changes whenever the key's layout or what a cached
// value holds changes.
const imageCacheKeyVersion = "vrender processed image v4"

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
		return newProcessedImage(prep, im.dtype.String()), resizedBytes(prep.Plan), nil
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
