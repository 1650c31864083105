package render

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/imaging"
	"github.com/vrender/vrender/internal/membudget"
	"github.com/vrender/vrender/media"
)

// budgetRenderer is the fixture image renderer with a budget of capacity
// bytes.
func budgetRenderer(t *testing.T, capacity int64) (*Renderer, *membudget.Budget) {
	t.Helper()
	b := membudget.New(capacity)
	r := imageRenderer(t, media.Config{}, func(c *ImageConfig) { c.Budget = b })
	if r.ImageBudget() != b {
		t.Fatal("ImageBudget is not the configured budget")
	}
	return r, b
}

// imagesInput is a chat request with the named corpus images.
func imagesInput(t *testing.T, names ...string) ChatInput {
	t.Helper()
	var parts []string
	for _, n := range names {
		parts = append(parts, `{"type":"image_url","image_url":{"url":"`+imageDataURL(t, n)+`"}}`)
	}
	return ChatInput{Messages: typedMessages([]json.RawMessage{json.RawMessage(`{"role":"user","content":[` + strings.Join(parts, ",") + `]}`)}),
		AddGenerationPrompt: true}
}

// costOf is what the budget charges for the named images.
func costOf(t *testing.T, r *Renderer, names ...string) int64 {
	t.Helper()
	var sum int64
	for _, n := range names {
		s, err := r.images.size(context.Background(), imageRef{url: imageDataURL(t, n)}, r.images.cfg.Kwargs, nil, r.images.cfg.Load, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		sum += s.cost
	}
	return sum
}

// TestImageCostCoversWhatTheImageHolds: the cost sized from the header is
// at least the bytes the rendered image is made of, and not more than
// twice them: the file, the decoded and the resized RGB pixels, and the
// features JSON whole in a body built whole (an answer not streamed), or
// a chunk buffer when streamed.
func TestImageCostCoversWhatTheImageHolds(t *testing.T) {
	cached, _ := budgetRenderer(t, 1<<40)
	plain := imageRenderer(t, media.Config{}, uncached, func(c *ImageConfig) { c.Budget = membudget.New(1 << 40) })
	for _, name := range []string{"jpeg_420_1920x1080.jpg", "png_rgba_320x240.png", "jpeg_exif_orient6_320x240.jpg",
		"jpeg_cmyk_400x300.jpg", "png_doc_1275x1650.png"} {
		for _, c := range []struct {
			name     string
			r        *Renderer
			streamed bool
		}{{"cached", cached, false}, {"cached streamed", cached, true}, {"uncached", plain, false}, {"uncached streamed", plain, true}} {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				r := c.r
				ctx := context.Background()
				if c.streamed {
					ctx = StreamedAnswer(ctx)
				}
				p, err := r.RenderChat(ctx, imagesInput(t, name))
				if err != nil {
					t.Fatal(err)
				}
				s, err := r.images.size(ctx, imageRef{url: imageDataURL(t, name)}, r.images.cfg.Kwargs, nil, r.images.cfg.Load, nil, true)
				if err != nil {
					t.Fatal(err)
				}
				rgb, err := imaging.Load(s.data, r.images.cfg.Load)
				if err != nil {
					t.Fatal(err)
				}
				jsonLen := int64(len(p.Features.AppendJSON(nil)))
				resized := int64(s.plan.ResizedWidth*s.plan.ResizedHeight) * 3
				held := int64(len(s.data)) + int64(len(rgb.Pix)) + resized
				if c.streamed {
					held += features.StreamBufferBytes
				} else {
					held += jsonLen
				}
				if s.cost < held {
					t.Errorf("cost %d < %d bytes held (file %d, rgb %d, resized %d, features JSON %d)",
						s.cost, held, len(s.data), len(rgb.Pix), resized, jsonLen)
				}
				if s.cost > 2*held {
					t.Errorf("cost %d is more than twice the %d bytes held: the budget would idle", s.cost, held)
				}
			})
		}
	}
}

// TestImageBudgetTooLarge: images that need more than the whole budget are
// a 413, not a wait that never ends; a header-only render reserves nothing.
func TestImageBudgetTooLarge(t *testing.T) {
	r, b := budgetRenderer(t, 1<<20)
	_, err := r.RenderChat(context.Background(), imagesInput(t, "jpeg_420_1920x1080.jpg"))
	var ie *ImageError
	if !errors.As(err, &ie) || ie.Status != http.StatusRequestEntityTooLarge || !strings.Contains(ie.Message, "--image-memory-budget of 1048576 bytes") {
		t.Fatalf("err = %v, want a 413 naming the budget", err)
	}
	if s := b.Stats(); s.InUse != 0 || s.Refused != 1 {
		t.Fatalf("stats after the refusal: %+v", s)
	}
	in := imagesInput(t, "jpeg_420_1920x1080.jpg")
	in.OmitMMKwargs = true
	if _, err := r.RenderChat(context.Background(), in); err != nil {
		t.Fatalf("header-only render: %v", err)
	}
}

// TestImageBudgetScope: under a scope the reservation outlives RenderChat
// until the scope ends; without one it ends with the call.
func TestImageBudgetScope(t *testing.T) {
	r, b := budgetRenderer(t, 1<<40)
	names := []string{"png_rgb_640x480.png", "jpeg_444_1280x720.jpg"}
	want := costOf(t, r, names...)
	ctx, end := membudget.WithScope(context.Background())
	if _, err := r.RenderChat(ctx, imagesInput(t, names...)); err != nil {
		t.Fatal(err)
	}
	if got := b.Stats().InUse; got != want {
		t.Fatalf("in use %d under the scope, want the images' cost %d", got, want)
	}
	end()
	if got := b.Stats().InUse; got != 0 {
		t.Fatalf("in use %d after the scope ended", got)
	}
	if _, err := r.RenderChat(context.Background(), imagesInput(t, names...)); err != nil {
		t.Fatal(err)
	}
	if got := b.Stats().InUse; got != 0 {
		t.Fatalf("in use %d after a render without a scope", got)
	}
}

// TestImageBudgetQueues: a request whose images do not fit waits, and goes
// on when the budget is freed; one that goes away while waiting holds
// nothing.
func TestImageBudgetQueues(t *testing.T) {
	sizer, _ := budgetRenderer(t, 0)
	name := "png_rgb_640x480.png"
	r, b := budgetRenderer(t, costOf(t, sizer, name))
	hold, err := b.Acquire(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	waitFor := func(what string, ok func(membudget.Stats) bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !ok(b.Stats()) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: stats %+v", what, b.Stats())
			}
			time.Sleep(time.Millisecond)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := r.RenderChat(ctx, imagesInput(t, name)); done <- err }()
	waitFor("queued", func(s membudget.Stats) bool { return s.Waiting == 1 })
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("canceled while queued: %v", err)
		}
	case <-time.After(time.Second):
		t.Fatal("a canceled request still waits for the budget after 1 s")
	}
	if s := b.Stats(); s.Waiting != 0 || s.InUse != 1 {
		t.Fatalf("after the cancel: %+v", s)
	}

	before := b.WaitHistogram().Count()
	go func() { _, err := r.RenderChat(context.Background(), imagesInput(t, name)); done <- err }()
	waitFor("queued", func(s membudget.Stats) bool { return s.Waiting == 1 })
	hold()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s := b.Stats(); s.Waiting != 0 || s.InUse != 0 {
		t.Fatalf("after the render: %+v", s)
	}
	if got := b.WaitHistogram().Count(); got != before+1 {
		t.Fatalf("wait histogram counted %d, want %d", got, before+1)
	}
}

// TestProcessStopsWhenCanceled: a request that ended before its image is
// decoded does not decode it, with the processed-image cache on and off.
func TestProcessStopsWhenCanceled(t *testing.T) {
	for _, cacheBytes := range []int64{0, DefaultImageCacheBytes} {
		r := imageRenderer(t, media.Config{}, func(c *ImageConfig) { c.CacheBytes = cacheBytes })
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		// Bytes no decoder takes: decoding them would answer an image error.
		if _, err := r.images.process(ctx, sizedImage{data: []byte("not an image")}, r.images.cfg.Kwargs, r.images.cfg.Load); !errors.Is(err, context.Canceled) {
			t.Fatalf("cache %d: err = %v, want context.Canceled before decoding", cacheBytes, err)
		}
	}
}

// TestEmbedsBudget: image_embeds reserve their tensors' cost from the image
// memory budget as images do — held under a scope until it ends, a 413 when
// they can never fit, nothing for an answer without the tensors — and the
// cost covers the tensors and the features JSON that carries them.
func TestEmbedsBudget(t *testing.T) {
	b := membudget.New(1 << 40)
	r := embedsRenderer(t, true, -1)
	r.images.cfg.Budget = b
	in := func() ChatInput {
		return ChatInput{Messages: embedsMessage(embedsPartJSON(tensorB64(t, "embeds_6x8.npy"), tensorB64(t, "i64_grid.npy"), "")),
			AddGenerationPrompt: true}
	}
	ctx, end := membudget.WithScope(context.Background())
	p, err := r.RenderChat(ctx, in())
	if err != nil {
		t.Fatal(err)
	}
	inUse := b.Stats().InUse
	if inUse == 0 {
		t.Fatal("image_embeds reserved nothing from the budget")
	}
	embeds, err := r.images.loadEmbeds(tensorB64(t, "embeds_6x8.npy"))
	if err != nil {
		t.Fatal(err)
	}
	grid, err := r.images.loadEmbeds(tensorB64(t, "i64_grid.npy"))
	if err != nil {
		t.Fatal(err)
	}
	held := int64(len(embeds.Data) + len(grid.Data))
	if want := held + 3*(held*4/3); inUse != want {
		t.Errorf("reserved %d bytes, want %d: %d bytes of tensors and their base64 three times", inUse, want, held)
	}
	if b64 := held * 4 / 3; int64(len(p.Features.AppendJSON(nil))) < b64 {
		t.Errorf("features JSON shorter than the tensors' base64 (%d bytes): the cost model is off", b64)
	}
	end()
	if got := b.Stats().InUse; got != 0 {
		t.Fatalf("in use %d after the scope ended", got)
	}

	noKwargs := in()
	noKwargs.OmitMMKwargs = true
	ctx, end = membudget.WithScope(context.Background())
	if _, err := r.RenderChat(ctx, noKwargs); err != nil {
		t.Fatal(err)
	}
	if got := b.Stats().InUse; got != 0 {
		t.Errorf("an answer without the tensors reserved %d bytes", got)
	}
	end()

	r.images.cfg.Budget = membudget.New(inUse - 1)
	_, err = r.RenderChat(context.Background(), in())
	var ie *ImageError
	if !errors.As(err, &ie) || ie.Status != http.StatusRequestEntityTooLarge {
		t.Fatalf("err = %v, want a 413 for embeds over the whole budget", err)
	}
}
