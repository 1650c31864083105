package render

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/zeebo/blake3"

	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/imaging"
	"github.com/vrender/vrender/imgcache"
	"github.com/vrender/vrender/vision"
)

// DefaultImageCacheBytes is --mm-processor-cache-gb's default, vLLM's 4 GiB.
const DefaultImageCacheBytes = 4 << 30

// processedImage is one image's processor output as the cache keeps it:
// read-only once stored, shared by every request that hits it. A cached
// image holds its item's pixel values already in base64
// (features.PixelEncoder), so a hit's answer splices them in instead of
// encoding megabytes again.
type processedImage struct {
	img       features.QwenImage
	numTokens int
	cols      int
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

// process decodes and processes one image's bytes, or finds the result in
// the cache. Failures are the answers imageError gives, the same for every
// request that waited on the same fill.
func (im *images) process(ctx context.Context, img sizedImage, kw vision.Kwargs, opts imaging.Options) (processedImage, error) {
	fill := func() (processedImage, int64, error) {
		// A client that went away stops the work here or between decoding
		// and processing (the decoders themselves run to the end).
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
		rgb, err := imaging.Load(data, opts)
		if err != nil {
			return processedImage{}, 0, imageError(err)
		}
		if err := ctx.Err(); err != nil {
			return processedImage{}, 0, err
		}
		p, err := im.encodeProcessed(*rgb, kw)
		if err != nil {
			return processedImage{}, 0, err
		}
		return p, int64(p.img.Encoded.Len()), nil
	}
	if im.cache == nil {
		p, _, err := fill()
		return p, err
	}
	p, _, err := im.cache.Do(ctx, im.cacheKey(img, kw, opts), fill)
	return p, err
}

// encodeProcessed processes rgb with its pixel values going straight into
// their item's base64, which the answer splices in (and a cached image
// keeps, so a hit encodes nothing): the processor hands over a few tens of
// kilobytes of patches at a time while they are in the CPU's cache, and the
// tensor is never held whole.
func (im *images) encodeProcessed(rgb imaging.RGB, kw vision.Kwargs) (processedImage, error) {
	plan, err := im.proc.Plan(rgb.Width, rgb.Height, kw)
	if err != nil {
		return processedImage{}, imageError(err)
	}
	grid := [3]int64{int64(plan.GridTHW[0]), int64(plan.GridTHW[1]), int64(plan.GridTHW[2])}
	enc, err := features.NewPixelEncoder(features.QwenImage{GridTHW: grid, DType: im.dtype.String()}, plan.Cols)
	if err != nil {
		return processedImage{}, fmt.Errorf("render: image features: %w", err)
	}
	if _, err := im.proc.ProcessTo(enc, rgb, kw); err != nil {
		return processedImage{}, imageError(err)
	}
	img, err := enc.Image()
	if err != nil {
		return processedImage{}, fmt.Errorf("render: image features: %w", err)
	}
	return processedImage{img: img, numTokens: plan.NumTokens, cols: plan.Cols}, nil
}

// ImageCacheStats reports the processed-image cache's counters (zero when
// the model takes no images or the cache is off).
func (r *Renderer) ImageCacheStats() imgcache.Stats {
	if r.images == nil {
		return imgcache.Stats{}
	}
	return r.images.cache.Stats()
}
