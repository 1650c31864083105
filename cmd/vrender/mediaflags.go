package main

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/imaging"
	"github.com/vrender/vrender/internal/membudget"
	"github.com/vrender/vrender/internal/pyfmt"
	"github.com/vrender/vrender/media"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/render"
	"github.com/vrender/vrender/vision"
)

// mediaFlags are vLLM's multimodal flags (and vrender's fetch limits) for
// models with an image processor.
type mediaFlags struct {
	limitMMPerPrompt      string
	mmProcessorKwargs     string
	allowedMediaDomains   string
	allowedLocalMediaPath string
	maxMediaBytes         int64
	allowPrivateMediaURLs bool
	imageMemoryBudget     int64
	mmProcessorCacheGB    float64
	mediaIOKwargs         string
	enableMMEmbeds        bool
}

func (f *mediaFlags) register(c *command) {
	fs := c.fs
	fs.StringVar(&f.limitMMPerPrompt, "limit-mm-per-prompt", "", "most images one prompt may carry: `JSON` {\"image\": N} or image=N (0 refuses images; default: no limit)")
	fs.StringVar(&f.mmProcessorKwargs, "mm-processor-kwargs", "", "`JSON` object of image processor kwargs (min_pixels, max_pixels, size, use_fast); request kwargs win key by key")
	fs.StringVar(&f.mediaIOKwargs, "media-io-kwargs", "", "`JSON` object of media loading kwargs by modality, e.g. {\"image\": {\"rgba_background_color\": [0, 0, 0]}}; a request's media_io_kwargs win key by key")
	fs.StringVar(&f.allowedMediaDomains, "allowed-media-domains", "", "comma-separated `HOSTS` image URLs may name (default: any)")
	fs.StringVar(&f.allowedLocalMediaPath, "allowed-local-media-path", "", "`DIR` file: image URLs may read below (default: file: URLs refused)")
	fs.Int64Var(&f.maxMediaBytes, "max-media-bytes", media.DefaultMaxMediaBytes, "most bytes one image may have (`N`; vLLM has no cap)")
	fs.Float64Var(&f.mmProcessorCacheGB, "mm-processor-cache-gb", 4, "GiB of images kept resized for the processor (3 bytes a pixel), by content and settings, so a re-sent image is decoded and resized once, plus up to an eighth of that in re-sent data: URL text memoized to its mm_hash (`GB`; 0 turns both off)")
	fs.BoolVar(&f.allowPrivateMediaURLs, "allow-private-media-urls", false, "let image fetches reach loopback, private and link-local addresses (vLLM always does)")
	fs.Int64Var(&f.imageMemoryBudget, "image-memory-budget", 0, "most bytes the images of concurrent requests may hold decoded and processed (`N`); "+
		"a request waits until its images fit (0: a quarter of the memory limit or RAM; -1: no limit)")
	fs.BoolVar(&f.enableMMEmbeds, "enable-mm-embeds", false, "accept image_embeds content parts: base64 .npy or torch.save tensors (Qwen2-VL form: image_embeds + image_grid_thw); an image limit of 0 then still lets them through")
}

// imageLimit parses --limit-mm-per-prompt's image count: -1 when unset.
func (f *mediaFlags) imageLimit() (int, error) {
	s := strings.TrimSpace(f.limitMMPerPrompt)
	if s == "" {
		return -1, nil
	}
	if strings.HasPrefix(s, "{") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			return 0, usagef("--limit-mm-per-prompt must be a JSON object or image=N, got %q", f.limitMMPerPrompt)
		}
		raw, ok := m["image"]
		if !ok {
			return -1, nil
		}
		var n int
		if err := json.Unmarshal(raw, &n); err != nil || n < 0 {
			return 0, usagef("--limit-mm-per-prompt image must be a non-negative integer, got %s", raw)
		}
		return n, nil
	}
	limit := -1
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if !ok || err != nil || n < 0 {
			return 0, usagef("--limit-mm-per-prompt must be a JSON object or image=N, got %q", f.limitMMPerPrompt)
		}
		if strings.TrimSpace(k) == "image" {
			limit = n
		}
	}
	return limit, nil
}

// imageConfig builds the image rendering settings for m.
func (f *mediaFlags) imageConfig(m *model.Model) (*render.ImageConfig, error) {
	limit, err := f.imageLimit()
	if err != nil {
		return nil, err
	}
	var kw vision.Kwargs
	if f.mmProcessorKwargs != "" {
		if kw, err = vision.ParseKwargs([]byte(f.mmProcessorKwargs)); err != nil {
			return nil, usagef("--mm-processor-kwargs: %v", err)
		}
	}
	cfg := media.Config{
		AllowedLocalMediaPath: f.allowedLocalMediaPath,
		MaxMediaBytes:         f.maxMediaBytes,
		AllowPrivateMediaURLs: f.allowPrivateMediaURLs,
	}
	for _, d := range strings.Split(f.allowedMediaDomains, ",") {
		if d = strings.TrimSpace(d); d != "" {
			cfg.AllowedMediaDomains = append(cfg.AllowedMediaDomains, d)
		}
	}
	if err := cfg.ApplyEnv(os.Getenv); err != nil {
		return nil, usagef("%v", err)
	}
	fetcher, err := media.New(cfg)
	if err != nil {
		return nil, usagef("%v", err)
	}
	cacheBytes, err := cacheBytesFromGB("--mm-processor-cache-gb", f.mmProcessorCacheGB)
	if err != nil {
		return nil, err
	}
	load := imaging.DefaultOptions()
	if load.MaxPixels, err = maxImagePixels(os.LookupEnv); err != nil {
		return nil, err
	}
	var mediaIO json.RawMessage
	if f.mediaIOKwargs != "" {
		if !json.Valid([]byte(f.mediaIOKwargs)) {
			return nil, usagef("--media-io-kwargs must be a JSON object, got %q", f.mediaIOKwargs)
		}
		mediaIO = json.RawMessage(f.mediaIOKwargs)
		if err := render.CheckMediaIOKwargs(mediaIO); err != nil {
			return nil, usagef("%v", err)
		}
	}
	alg, err := features.ParseAlgorithm(os.Getenv("VLLM_MM_HASHER_ALGORITHM"))
	if err != nil {
		return nil, usagef("VLLM_MM_HASHER_ALGORITHM: %v", err)
	}
	return &render.ImageConfig{
		Fetcher:        fetcher,
		Limit:          limit,
		Kwargs:         kw,
		Load:           load,
		Hasher:         features.Hasher{ModelID: m.Path, Algorithm: alg},
		CacheBytes:     cacheBytes,
		MediaIOKwargs:  mediaIO,
		Budget:         f.budget(),
		EnableMMEmbeds: f.enableMMEmbeds,
	}, nil
}

// fallbackMemory stands for the machine's memory where it cannot be read.
const fallbackMemory = 8 << 30

// budget is --image-memory-budget's budget: nil for -1; for 0 a quarter
// of what the process may use, leaving the rest to the tokenizer, the
// request bodies, the processed-image cache and the garbage collector's
// headroom (the heap may grow to twice the live bytes at GOGC=100 before a
// collection).
func (f *mediaFlags) budget() *membudget.Budget {
	switch n := f.imageMemoryBudget; {
	case n < 0:
		return nil
	case n > 0:
		return membudget.New(n)
	}
	mem, ok := membudget.SystemMemory()
	if !ok {
		mem = fallbackMemory
	}
	return membudget.New(mem / 4)
}

// maxImagePixels is VLLM_MAX_IMAGE_PIXELS read as vLLM reads it,
// int(os.getenv(...)): Python's int() text (a value beyond int64 is as
// good as no limit, or off when negative); 0 or less turns the limit off.
// vLLM fails on the first image with int()'s ValueError; vrender refuses
// to start.
func maxImagePixels(lookup func(string) (string, bool)) (int64, error) {
	v, ok := lookup("VLLM_MAX_IMAGE_PIXELS")
	if !ok {
		return imaging.DefaultMaxPixels, nil
	}
	n, err := pyfmt.ParseInt(v)
	if errors.Is(err, strconv.ErrSyntax) {
		return 0, usagef("VLLM_MAX_IMAGE_PIXELS: invalid literal for int() with base 10: %s", pyfmt.AppendStrRepr(nil, v, `\ufffd`))
	}
	return n, nil
}

// cacheBytesFromGB is a cache size in GB given as vLLM's
// --mm-processor-cache-gb (flag names the flag for the error) in bytes as
// vLLM computes it, int(gb * GiB); vLLM's config refuses a negative value
// (ge=0) and NaN, and cannot convert an infinite one.
func cacheBytesFromGB(flag string, gb float64) (int64, error) {
	b := gb * (1 << 30)
	if !(gb >= 0) || math.IsInf(b, 0) || b >= math.MaxInt64 {
		return 0, usagef("%s must be a finite number greater than or equal to 0, got %v", flag, gb)
	}
	return int64(b), nil
}
