package main

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"

	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/imaging"
	"github.com/vrender/vrender/internal/membudget"
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
}

func (f *mediaFlags) register(c *command) {
	fs := c.fs
	fs.StringVar(&f.limitMMPerPrompt, "limit-mm-per-prompt", "", "most images one prompt may carry: `JSON` {\"image\": N} or image=N (0 refuses images; default: no limit)")
	fs.StringVar(&f.mmProcessorKwargs, "mm-processor-kwargs", "", "`JSON` object of image processor kwargs (min_pixels, max_pixels, size, use_fast); request kwargs win key by key")
	fs.StringVar(&f.allowedMediaDomains, "allowed-media-domains", "", "comma-separated `HOSTS` image URLs may name (default: any)")
	fs.StringVar(&f.allowedLocalMediaPath, "allowed-local-media-path", "", "`DIR` file: image URLs may read below (default: file: URLs refused)")
	fs.Int64Var(&f.maxMediaBytes, "max-media-bytes", media.DefaultMaxMediaBytes, "most bytes one image may have (`N`; vLLM has no cap)")
	fs.BoolVar(&f.allowPrivateMediaURLs, "allow-private-media-urls", false, "let image fetches reach loopback, private and link-local addresses (vLLM always does)")
	fs.Int64Var(&f.imageMemoryBudget, "image-memory-budget", 0, "most bytes the images of concurrent requests may hold decoded and processed (`N`); "+
		"a request waits until its images fit (0: a quarter of the memory limit or RAM; -1: no limit)")
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
	alg, err := features.ParseAlgorithm(os.Getenv("VLLM_MM_HASHER_ALGORITHM"))
	if err != nil {
		return nil, usagef("VLLM_MM_HASHER_ALGORITHM: %v", err)
	}
	return &render.ImageConfig{
		Fetcher: fetcher,
		Limit:   limit,
		Kwargs:  kw,
		Load:    imaging.DefaultOptions(),
		Hasher:  features.Hasher{ModelID: m.Path, Algorithm: alg},
		Budget:  f.budget(),
	}, nil
}

// fallbackMemory stands for the machine's memory where it cannot be read.
const fallbackMemory = 8 << 30

// budget is --image-memory-budget's budget: nil for -1; for 0 a quarter
// of what the process may use, leaving the rest to the tokenizer, the
// request bodies and the garbage collector's headroom (the heap may grow to
// twice the live bytes at GOGC=100 before a collection).
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
