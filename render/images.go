package render

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/imaging"
	"github.com/vrender/vrender/imgcache"
	"github.com/vrender/vrender/internal/membudget"
	"github.com/vrender/vrender/media"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/vision"
)

// Qwen2-VL family prompt pieces: the string content format's placeholder
// (get_placeholder_str) and the token one image's placeholder expands from.
const (
	qwenImagePlaceholder = "<|vision_start|><|image_pad|><|vision_end|>"
	qwenImagePad         = "<|image_pad|>"
)

// ImageConfig holds the server flags that shape image rendering.
type ImageConfig struct {
	// Fetcher gets the bytes an image URL names (--allowed-media-domains,
	// --allowed-local-media-path, --max-media-bytes, ...).
	Fetcher *media.Fetcher
	// Limit is --limit-mm-per-prompt's image count; negative: no limit.
	Limit int
	// Kwargs are --mm-processor-kwargs; a request's are merged over them.
	Kwargs vision.Kwargs
	// Load are the decoding options (VLLM_MAX_IMAGE_PIXELS, background).
	Load imaging.Options
	// MediaIOKwargs is --media-io-kwargs (a JSON object of objects by
	// modality; nil when not given): its image rgba_background_color
	// replaces Load's background, and a request's media_io_kwargs are
	// merged over it.
	MediaIOKwargs json.RawMessage
	// Hasher computes mm_hashes (its ModelID is the --model value).
	Hasher features.Hasher
	// CacheBytes bounds the processed-image cache (--mm-processor-cache-gb
	// in bytes); 0 turns it off.
	CacheBytes int64
	// Budget, when set, bounds the bytes concurrent requests' images hold
	// (--image-memory-budget): a request reserves its images' cost, sized
	// from their headers, before decoding them (imagebudget.go).
	Budget *membudget.Budget
	// EnableMMEmbeds (--enable-mm-embeds) accepts image_embeds parts.
	EnableMMEmbeds bool
}

// images is a renderer's image support: the model's processor and the
// server's settings.
type images struct {
	cfg   ImageConfig
	proc  vision.Processor
	dtype vision.DType
	padID int
	// merge is the vision tower's spatial_merge_size: an image_embeds
	// item's tokens are its grid's t·h·w // merge².
	merge int
	// cache keeps processed images by cacheKey (nil: off); procDigest
	// names proc in that key.
	cache      *imgcache.Cache[processedImage]
	procDigest [32]byte
	// memo skips decoding and hashing a re-sent data URL (imagememo.go;
	// nil when the cache is off).
	memo *urlMemo
	// mediaIO is cfg.MediaIOKwargs decoded (nil when not given).
	mediaIO *node
	// files holds *[]byte buffers a data URL is decoded into when only
	// its header and hash are needed (return_mm_kwargs false): reused,
	// the buffer is neither zeroed nor collected, and stays in the CPU's
	// cache for the hash that reads it back. A pointer, so that a copy
	// of images (tests make them) shares it; nil: not used.
	files *sync.Pool
}

// maxPooledFile bounds the file buffers images.files keeps: a rare huge
// image is not held for the requests after it.
const maxPooledFile = 8 << 20

// newImages prepares image rendering for m, or returns nil when m has no
// preprocessor_config.json (a text-only model).
func newImages(m *model.Model, cfg *ImageConfig) (*images, error) {
	if cfg == nil {
		return nil, nil
	}
	raw, err := os.ReadFile(filepath.Join(m.Dir, "preprocessor_config.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	dtype, err := modelDType(m.Config)
	if err != nil {
		return nil, err
	}
	proc, err := vision.New(raw, dtype)
	if err != nil {
		return nil, fmt.Errorf("render: %s: %w", filepath.Join(m.Dir, "preprocessor_config.json"), err)
	}
	pad := m.Tokenizer.Encode(qwenImagePad, false)
	if len(pad) != 1 {
		return nil, fmt.Errorf("render: the tokenizer has no %s token", qwenImagePad)
	}
	if cfg.Fetcher == nil {
		return nil, errors.New("render: image rendering needs a media fetcher")
	}
	mediaIO, err := parseServerMediaIO(cfg.MediaIOKwargs)
	if err != nil {
		return nil, err
	}
	merge, err := spatialMergeSize(m.Config)
	if err != nil {
		return nil, err
	}
	im := &images{cfg: *cfg, proc: proc, dtype: dtype, padID: pad[0], merge: merge, mediaIO: mediaIO,
		cache: imgcache.New[processedImage](cfg.CacheBytes), procDigest: processorDigest(raw, dtype), files: new(sync.Pool)}
	if im.cache != nil {
		im.memo = newURLMemo(cfg.CacheBytes / memoShare)
	}
	return im, nil
}

// spatialMergeSize is config.json's vision_config.spatial_merge_size
// (Qwen2VLVisionConfig's default, 2, when absent).
func spatialMergeSize(cfg map[string]any) (int, error) {
	vc, _ := cfg["vision_config"].(map[string]any)
	v, ok := vc["spatial_merge_size"]
	if !ok {
		return 2, nil
	}
	f, isNum := v.(float64)
	if !isNum || f < 1 || f > 64 || f != float64(int(f)) {
		return 0, fmt.Errorf("render: config.json vision_config.spatial_merge_size %v", v)
	}
	return int(f), nil
}

// modelDType is the dtype vLLM casts processor outputs to: config.json's
// dtype (torch_dtype in older configs), float32 served as bfloat16 as
// vLLM's --dtype auto does.
func modelDType(cfg map[string]any) (vision.DType, error) {
	name, _ := cfg["dtype"].(string)
	if name == "" {
		name, _ = cfg["torch_dtype"].(string)
	}
	if name == "" || name == "float32" {
		return vision.BFloat16, nil
	}
	d, err := vision.ParseDType(name)
	if err != nil {
		return 0, fmt.Errorf("render: config.json dtype: %w", err)
	}
	return d, nil
}

// imageRef is one image part: its URL and the part's uuid.
type imageRef struct {
	url  string
	uuid *string
}

// imageParts collects a request's image and image_embeds parts in prompt
// order.
type imageParts struct {
	im     *images // nil in tests of parsing alone
	refs   []imageRef
	embeds []embedsPart
}

// add takes an image part (typed image_url or input_image, or the
// type-less {"image_url": ...}): image_url is a URL string or {"url", "detail"}.
func (mm *imageParts) add(p *protocol.ContentPart) (parsedPart, bool, error) {
	if p.BadUUID != nil {
		return parsedPart{}, false, badParam("uuid", "uuid must be a string, got %s", pyType(p.BadUUID))
	}
	img := p.Image
	if img == nil {
		if p.UUID != nil {
			// A uuid without data refers to the processor cache, which the
			// render tier does not keep (skip_mm_cache).
			return parsedPart{}, false, badParam("image_url",
				"Image with uuid %s has no data and is not cached on this render server", pyStrRepr(*p.UUID))
		}
		return parsedPart{}, false, nil
	}
	if img.Detail != nil && *img.Detail != "auto" {
		slog.Warn("'detail' is ignored for image inputs", "detail", *img.Detail)
	}
	if !img.URLOK {
		return parsedPart{}, false, badParam("image_url", "image_url must be a URL string or an object with a string 'url'")
	}
	mm.refs = append(mm.refs, imageRef{url: img.URL, uuid: p.UUID})
	return parsedPart{image: true}, true, nil
}

// withPlaceholders is the string content format's text for a message:
// vLLM's _get_full_multimodal_text_prompt prepends the placeholders the
// text lacks, joined by "\n". mm may be nil.
func (mm *imageParts) withPlaceholders(parts []parsedPart, text string) string {
	n := 0
	for _, p := range parts {
		if p.image {
			n++
		}
	}
	if n == 0 {
		return text
	}
	missing := n - strings.Count(text, qwenImagePlaceholder)
	if missing <= 0 {
		return text
	}
	return strings.Repeat(qwenImagePlaceholder+"\n", missing) + text
}

// checkLimit is vLLM's --limit-mm-per-prompt check on a request's images.
func (im *images) checkLimit(n int) error {
	if im.cfg.Limit >= 0 && n > im.cfg.Limit {
		return badRequest("At most %d image(s) may be provided in one prompt.", im.cfg.Limit)
	}
	return nil
}

// ImageError is a request's image that could not be fetched, decoded or
// processed, with the status and error type vLLM answers.
type ImageError struct {
	Status  int
	Type    string
	Param   string
	Message string
	Err     error
}

func (e *ImageError) Error() string { return e.Message }
func (e *ImageError) Unwrap() error { return e.Err }

// imageError maps a fetch, decode or processor failure to its answer.
func imageError(err error) error {
	if me, ok := media.AsError(err); ok {
		return &ImageError{Status: me.Status, Type: me.Type, Param: me.Param, Message: me.Message, Err: err}
	}
	var le *imaging.LimitError
	if errors.As(err, &le) {
		return &ImageError{Status: 400, Type: "BadRequestError", Message: le.Error(), Err: err}
	}
	var ie *imaging.Error
	if errors.As(err, &ie) {
		return &ImageError{Status: 400, Type: "BadRequestError", Message: "Failed to load image: " + ie.Error(), Err: err}
	}
	var ve *vision.Error
	if errors.As(err, &ve) {
		return &ImageError{Status: 400, Type: "BadRequestError", Message: ve.Message, Err: err}
	}
	return err
}

// maxParallelImages is how many images of one request load at once
// (VLLM_MEDIA_LOADING_THREAD_COUNT's default).
const maxParallelImages = 8

// firstImageError is the error of the first image, in prompt order, that
// failed on its own rather than because another failure canceled it.
func firstImageError(ctx context.Context, errs []error) error {
	var canceled error
	for _, err := range errs {
		switch {
		case err == nil:
		case ctx.Err() == nil && errors.Is(err, context.Canceled):
			canceled = err
		default:
			return err
		}
	}
	return canceled
}

// DefaultImageConfig is vLLM's default image handling for m (used only when
// m has an image processor): no per-prompt limit, fetching as mc says,
// vLLM's loader defaults, the default hasher and vLLM's default cache size.
func DefaultImageConfig(m *model.Model, mc media.Config) (*ImageConfig, error) {
	fetcher, err := media.New(mc)
	if err != nil {
		return nil, err
	}
	return &ImageConfig{Fetcher: fetcher, Limit: -1, Load: imaging.DefaultOptions(), Hasher: features.Hasher{ModelID: m.Path},
		CacheBytes: DefaultImageCacheBytes}, nil
}

// sizedImage is one fetched image sized from its header: what its
// placeholder needs, and its budget before any pixel is decoded.
type sizedImage struct {
	// data is nil when the memo answered: process decodes url again if
	// the cache no longer holds the image.
	data []byte
	url  string
	plan vision.Plan
	hash string
	// frame is what the mm_hash's stream holds besides data (nil when it
	// does not cover data, or when there is no cache to key by it).
	frame []byte
	cost  int64 // bytes its decoding and processing hold (imageCost)
}

// size fetches one image, reads its size from the header, plans the
// processor's resize and hashes the bytes: everything but the pixels.
// memoAux is the request's part of the memo key (memoAux; nil: the memo
// is not used); withKwargs says the request decodes the pixels (the memo
// keeps a URL it sees first then).
func (im *images) size(ctx context.Context, ref imageRef, kw vision.Kwargs, hashKwargs *node, opts imaging.Options, memoAux *string, withKwargs bool) (sizedImage, error) {
	var key memoKey
	var sum uint64
	if im.memo != nil && memoAux != nil && memoizable(ref) {
		key = memoKey{url: ref.url, aux: *memoAux}
		sum = im.memo.sum(key)
		if v, ok := im.memo.get(key, sum); ok {
			plan, err := im.proc.Plan(v.info.Width, v.info.Height, kw)
			if err != nil {
				return sizedImage{}, imageError(err)
			}
			return sizedImage{url: ref.url, plan: plan, hash: v.hash, frame: v.frame, cost: im.imageCost(v.n, v.info, plan, isStreamed(ctx))}, nil
		}
	}
	var data []byte
	var err error
	if withKwargs || im.files == nil {
		data, err = im.cfg.Fetcher.Fetch(ctx, ref.url)
	} else {
		// Nothing reads the file after this function (the answer needs
		// its header and hash only), so it may go into a reused buffer.
		buf, _ := im.files.Get().(*[]byte)
		if buf == nil {
			buf = new([]byte)
		}
		data, err = im.cfg.Fetcher.FetchInto(ctx, ref.url, *buf)
		defer func() {
			if cap(data) > cap(*buf) && cap(data) <= maxPooledFile {
				*buf = data[:0] // the file outgrew the buffer: keep the larger one
			}
			im.files.Put(buf)
		}()
	}
	if err != nil {
		return sizedImage{}, imageError(err)
	}
	info, err := imaging.Probe(data, opts)
	if err != nil {
		return sizedImage{}, imageError(err)
	}
	plan, err := im.proc.Plan(info.Width, info.Height, kw)
	if err != nil {
		return sizedImage{}, imageError(err)
	}
	var hash string
	var frame []byte
	if im.cache != nil {
		// The cache key reads the file's bytes through the mm_hash when
		// the hash covers them (cacheKey): one pass over the file.
		hash, frame, err = im.cfg.Hasher.ImageHashFramed(data, ref.uuid, hashKwargs)
	} else {
		hash, err = im.cfg.Hasher.ImageHash(data, ref.uuid, hashKwargs)
	}
	if err != nil {
		return sizedImage{}, fmt.Errorf("render: hashing image: %w", err)
	}
	if key.url != "" && frame != nil {
		im.memo.put(key, sum, memoValue{info: info, n: len(data), hash: hash, frame: frame}, withKwargs)
	}
	s := sizedImage{data: data, url: ref.url, plan: plan, hash: hash, frame: frame, cost: im.imageCost(len(data), info, plan, isStreamed(ctx))}
	if !withKwargs && im.files != nil {
		s.data = nil // the buffer goes back to im.files
	}
	return s, nil
}

// eachImage runs f for images 0..n-1 side by side, as vLLM's media thread
// pool loads them (at most maxParallelImages at once); the first failure
// stops the others and the first in prompt order is returned.
func eachImage(ctx context.Context, n int, f func(ctx context.Context, i int) error) error {
	errs := make([]error, n)
	loadCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, maxParallelImages)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := f(loadCtx, i); err != nil {
				errs[i] = err
				cancel()
			}
		}()
	}
	wg.Wait()
	return firstImageError(ctx, errs)
}

// expand fetches and processes the images, expands each image pad of ids
// to its tokens and builds the features: pixels decoded and processed when
// withKwargs, else sizes read from the headers alone (imaging.Probe and
// Processor.Plan give the same grid). reqMediaIO is the request's
// media_io_kwargs.
func (im *images) expand(ctx context.Context, refs []imageRef, ids []int, reqKwargs, reqMediaIO *node, withKwargs bool) ([]int, *features.Features, error) {
	// vLLM builds the image loader, which checks media_io_kwargs, before
	// it fetches.
	opts, err := im.loadOptions(reqMediaIO)
	if err != nil {
		return nil, nil, err
	}
	kw, err := vision.KwargsOf(reqKwargs)
	if err != nil {
		return nil, nil, imageError(err)
	}
	kw = kw.Over(im.cfg.Kwargs)
	// aux is nil when the request's kwargs keep it out of the memo.
	var aux *string
	if im.memo != nil {
		if a, ok := memoAux(reqKwargs, opts); ok {
			aux = &a
		}
	}
	sized := make([]sizedImage, len(refs))
	if err := eachImage(ctx, len(refs), func(ctx context.Context, i int) (err error) {
		sized[i], err = im.size(ctx, refs[i], kw, reqKwargs, opts, aux, withKwargs)
		return err
	}); err != nil {
		return nil, nil, err
	}
	imgs := make([]features.Image, len(refs))
	numTokens := make([]int, len(refs))
	rowWidths := make([]int, len(refs))
	for i, s := range sized {
		imgs[i].Hash, numTokens[i] = s.hash, s.plan.NumTokens
	}
	if withKwargs {
		release, err := im.reserve(ctx, sized)
		if err != nil {
			return nil, nil, err
		}
		defer release()
		if err := eachImage(ctx, len(refs), func(ctx context.Context, i int) error {
			p, err := im.process(ctx, sized[i], kw, opts)
			if err != nil {
				return err
			}
			imgs[i].Processed, rowWidths[i] = p.image, p.cols
			return nil
		}); err != nil {
			return nil, nil, err
		}
	}
	// Every image of a model has the same row width (0 when not processed).
	cols := rowWidths[0]

	out, places, err := im.expandPads(ids, numTokens)
	if err != nil {
		return nil, nil, err
	}
	for k := range imgs {
		imgs[k].Placeholder = places[k]
	}
	f, err := features.QwenImageFeatures(imgs, cols, features.Options{Kwargs: withKwargs})
	if err != nil {
		return nil, nil, fmt.Errorf("render: image features: %w", err)
	}
	return out, &f, nil
}

// expandPads expands the first len(numTokens) image pads of ids, the k-th
// to numTokens[k] pads, and gives each item's placeholder.
func (im *images) expandPads(ids, numTokens []int) ([]int, []features.Placeholder, error) {
	total := len(ids)
	for _, n := range numTokens {
		total += n - 1
	}
	out := make([]int, 0, total)
	places := make([]features.Placeholder, len(numTokens))
	k := 0
	for _, id := range ids {
		if id != im.padID || k == len(numTokens) {
			out = append(out, id)
			continue
		}
		places[k] = features.Placeholder{Offset: len(out), Length: numTokens[k]}
		for range numTokens[k] {
			out = append(out, im.padID)
		}
		k++
	}
	if k < len(numTokens) {
		// vLLM's _apply_prompt_updates finds no place for the image.
		return nil, nil, badRequest("Failed to apply prompt replacement for mm_items['image'][%d].", k)
	}
	return out, places, nil
}
