package render

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/imaging"
	"github.com/vrender/vrender/internal/membudget"
	"github.com/vrender/vrender/vision"
)

// qwenTemporalPatch is temporal_patch_size of every Qwen2-VL-family
// processor: pixel_values hold each image twice.
const qwenTemporalPatch = 2

// imageCost is the bytes one image holds while its request is served,
// from its header alone: the fetched file; the decoded RGB pixels (RGB
// decodes in place, every other mode through a 4-byte-per-pixel image
// first, and an EXIF rotation makes a copy); the resized pixels, which the
// answer's pixel values are made from as it is written (a cached image's
// stay in the cache after, within its own bound, not this budget); and
// the base64 of its item whole in a body built before it is sent (an
// engine's request), or one chunk buffer when the answer is streamed to
// its client (StreamedAnswer). pixel_values themselves are never held
// whole.
func (im *images) imageCost(fileBytes int, info imaging.Info, plan vision.Plan, streamed bool) int64 {
	src := int64(info.Width) * int64(info.Height)
	perSrc := int64(3)
	if info.Mode != "RGB" {
		perSrc += 4
	}
	if info.Orientation > 1 {
		perSrc += 3
	}
	held := int64(fileBytes) + src*perSrc + resizedBytes(plan)
	if streamed {
		return held + features.StreamBufferBytes
	}
	return held + base64Cost(plan, im.dtype)
}

// base64Cost bounds the features JSON of an image of plan: the base64 of
// its pixel values and itemSlack.
func base64Cost(plan vision.Plan, dtype vision.DType) int64 {
	return int64(plan.ResizedWidth)*int64(plan.ResizedHeight)*3*qwenTemporalPatch*int64(dtype.Size())*4/3 + itemSlack
}

// itemSlack bounds what an image's features JSON holds besides its pixel
// values' base64: its item's msgpack around them, its hash, placeholder
// and grid.
const itemSlack = 4 << 10

type streamedKey struct{}

// StreamedAnswer marks ctx's request as one whose answer is streamed to
// its client (features.Features.AppendBody into a wire.Body written
// whole): its images' pixel values are encoded into one chunk buffer at a
// time instead of a body, and their budget counts that.
func StreamedAnswer(ctx context.Context) context.Context {
	return context.WithValue(ctx, streamedKey{}, true)
}

func isStreamed(ctx context.Context) bool {
	s, _ := ctx.Value(streamedKey{}).(bool)
	return s
}

// reserve takes the request's images' cost from the budget, all at once
// (a request holding part of its cost while it waits for the rest could
// deadlock with another doing the same), waiting while other requests hold
// it. Under a membudget scope the bytes stay reserved until the scope ends
// (the server's: the response written); otherwise release returns them.
func (im *images) reserve(ctx context.Context, sized []sizedImage) (release func(), err error) {
	var need int64
	for _, s := range sized {
		need += s.cost
	}
	return im.reserveBytes(ctx, need)
}

// embedsCost is the bytes a request's image_embeds hold while an answer
// carrying them is served: the tensors as loaded and their base64 in the
// body three times over (as imageCost counts a growing body).
func embedsCost(items []features.QwenEmbeds) int64 {
	var held int64
	for _, it := range items {
		held += int64(len(it.Embeds.Data)) + int64(len(it.GridTHW.Data))
	}
	return held + 3*(held*4/3)
}

// reserveBytes takes need bytes from the budget at once (see reserve).
func (im *images) reserveBytes(ctx context.Context, need int64) (release func(), err error) {
	b := im.cfg.Budget
	if b == nil {
		return func() {}, nil
	}
	release, err = b.Acquire(ctx, need)
	var tl *membudget.TooLargeError
	if errors.As(err, &tl) {
		return nil, &ImageError{Status: http.StatusRequestEntityTooLarge, Type: http.StatusText(http.StatusRequestEntityTooLarge),
			Message: fmt.Sprintf("The request's images need %d bytes of memory to process, more than the server's "+
				"--image-memory-budget of %d bytes; send fewer or smaller images.", tl.Need, tl.Capacity), Err: err}
	}
	return release, err
}

// ImageBudget is the budget the renderer's images reserve from: nil for a
// text model or when none is configured.
func (r *Renderer) ImageBudget() *membudget.Budget {
	if r.images == nil {
		return nil
	}
	return r.images.cfg.Budget
}
