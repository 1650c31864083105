package render

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/media"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/protocol"
)

// TestNormalizeImageParts is the template input vLLM builds from image
// parts, in both content formats, and the parts it refuses.
func TestNormalizeImageParts(t *testing.T) {
	const ph = qwenImagePlaceholder
	// nodeJSON escapes < and > as encoding/json does.
	const phJ = `\u003c|vision_start|\u003e\u003c|image_pad|\u003e\u003c|vision_end|\u003e`
	tests := []struct {
		name, in, format string
		want             string
		wantURLs         []string
		wantUUIDs        []string
		wantErr          string
	}{
		{"openai: image becomes {type: image}", `[{"role":"user","content":[{"type":"image_url","image_url":{"url":"u1"}},{"type":"text","text":"hi"}]}]`,
			FormatOpenAI, `[{"role":"user","content":[{"type":"image"},{"type":"text","text":"hi"}]}]`, []string{"u1"}, []string{""}, ""},
		{"string: placeholder prepended", `[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"u1"}}]}]`,
			FormatString, `[{"role":"user","content":"` + phJ + `\nhi"}]`, []string{"u1"}, []string{""}, ""},
		{"string: two images, text joined", `[{"role":"user","content":[{"type":"image_url","image_url":"u1"},{"type":"text","text":"a"},{"image_url":"u2"},{"type":"text","text":"b"}]}]`,
			FormatString, `[{"role":"user","content":"` + phJ + `\n` + phJ + `\na\nb"}]`, []string{"u1", "u2"}, []string{"", ""}, ""},
		{"string: placeholder in the text counts", `[{"role":"user","content":[{"type":"text","text":"see ` + ph + `"},{"type":"image_url","image_url":{"url":"u1"}}]}]`,
			FormatString, `[{"role":"user","content":"see ` + phJ + `"}]`, []string{"u1"}, []string{""}, ""},
		{"string: image only", `[{"role":"user","content":[{"type":"image_url","image_url":{"url":"u1"}}]}]`,
			FormatString, `[{"role":"user","content":"` + phJ + `\n"}]`, []string{"u1"}, []string{""}, ""},
		{"bare string and type-less forms", `[{"role":"user","content":[{"type":"image_url","image_url":"u1"},{"image_url":{"url":"u2","detail":"high"}}]}]`,
			FormatOpenAI, `[{"role":"user","content":[{"type":"image"},{"type":"image"}]}]`, []string{"u1", "u2"}, []string{"", ""}, ""},
		{"input_image", `[{"role":"user","content":[{"type":"input_image","image_url":"u1"}]}]`,
			FormatOpenAI, `[{"role":"user","content":[{"type":"image"}]}]`, []string{"u1"}, []string{""}, ""},
		{"uuid", `[{"role":"user","content":[{"type":"image_url","image_url":{"url":"u1"},"uuid":"my-id"}]}]`,
			FormatOpenAI, `[{"role":"user","content":[{"type":"image"}]}]`, []string{"u1"}, []string{"my-id"}, ""},
		{"null image skipped", `[{"role":"user","content":[{"type":"image_url","image_url":null},{"type":"text","text":"x"}]}]`,
			FormatOpenAI, `[{"role":"user","content":[{"type":"text","text":"x"}]}]`, nil, nil, ""},
		{"uuid without data", `[{"role":"user","content":[{"type":"image_url","image_url":null,"uuid":"k"}]}]`,
			FormatOpenAI, "", nil, nil, "Image with uuid 'k' has no data and is not cached on this render server"},
		{"url not a string", `[{"role":"user","content":[{"type":"image_url","image_url":{"url":5}}]}]`,
			FormatOpenAI, "", nil, nil, "image_url must be a URL string or an object with a string 'url'"},
		{"uuid not a string", `[{"role":"user","content":[{"type":"image_url","image_url":"u","uuid":5}]}]`,
			FormatOpenAI, "", nil, nil, "uuid must be a string, got int"},
		{"image_embeds without --enable-mm-embeds", `[{"role":"user","content":[{"type":"image_embeds","image_embeds":"x"}]}]`,
			FormatOpenAI, "", nil, nil, errEmbedsGate},
		{"type-less image_embeds without --enable-mm-embeds", `[{"role":"user","content":[{"image_embeds":{"image_embeds":"x"},"uuid":"u"}]}]`,
			FormatOpenAI, "", nil, nil, errEmbedsGate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mm := &imageParts{}
			msgs, err := normalizeChat(testMessages(t, tt.in), tt.format, false, mm)
			if got := badRequestMessage(err); got != tt.wantErr {
				t.Fatalf("err = %v (400 message %q), want %q", err, got, tt.wantErr)
			}
			if err != nil {
				return
			}
			if got := nodeJSON(&node{Kind: jArr, Arr: msgs}); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if len(mm.refs) != len(tt.wantURLs) {
				t.Fatalf("%d images, want %d", len(mm.refs), len(tt.wantURLs))
			}
			for i, ref := range mm.refs {
				uuid := ""
				if ref.uuid != nil {
					uuid = *ref.uuid
				}
				if ref.url != tt.wantURLs[i] || uuid != tt.wantUUIDs[i] {
					t.Errorf("image %d = %q uuid %q, want %q uuid %q", i, ref.url, uuid, tt.wantURLs[i], tt.wantUUIDs[i])
				}
			}
		})
	}
}

// badRequestMessage is err's 400 message; "" for nil, and err's text
// marked as not a 400 otherwise.
func badRequestMessage(err error) string {
	var br *BadRequestError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &br):
		return br.Message
	}
	return "not a BadRequestError: " + err.Error()
}

// TestTextModelRefusesImages: without image support (nil imageParts)
// image parts keep the 400.
func TestTextModelRefusesImages(t *testing.T) {
	for _, in := range []string{
		`[{"role":"user","content":[{"type":"image_url","image_url":{"url":"u"}}]}]`,
		`[{"role":"user","content":[{"image_url":"u"}]}]`,
		`[{"role":"user","content":[{"type":"input_image","image_url":"u"}]}]`,
	} {
		_, err := normalizeMessages(testMessages(t, in), FormatOpenAI, false)
		if badRequestMessage(err) != errMultimodal {
			t.Errorf("%s: err = %v, want %q", in, err, errMultimodal)
		}
	}
}

// imageRenderer is a renderer of the shared Qwen2.5-VL fixture model;
// edits change its image settings.
func imageRenderer(t testing.TB, mc media.Config, edits ...func(*ImageConfig)) *Renderer {
	t.Helper()
	dir := filepath.Join(testenv.SharedDir(t), "multimodal", "models", "qwen2_5_vl")
	if _, err := os.Stat(dir); err != nil {
		testenv.Missing(t, dir, "the multimodal fixtures of ../shared")
	}
	m, err := model.Load(context.Background(), dir, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	images, err := DefaultImageConfig(m, mc)
	if err != nil {
		t.Fatal(err)
	}
	for _, edit := range edits {
		edit(images)
	}
	r, err := New(m, Config{Images: images})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func imageDataURL(t testing.TB, name string) string {
	t.Helper()
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(sharedImage(t, name))
}

func renderedFeatures(t *testing.T, p *ChatPrompt) features.Modality {
	t.Helper()
	n, err := wire.Parse(p.Features.AppendJSON(nil))
	if err != nil {
		t.Fatal(err)
	}
	f, err := features.Decode(n)
	if err != nil {
		t.Fatal(err)
	}
	return f.Modalities[0]
}

// TestRenderImageHashesAndKwargs: a uuid is the hash when no processor
// kwargs are sent; mm_processor_kwargs change both the hash and the token
// count, as in vLLM.
func TestRenderImageHashesAndKwargs(t *testing.T) {
	r := imageRenderer(t, media.Config{})
	url := imageDataURL(t, "png_rgb_640x480.png")
	msgs := func(uuid string) []json.RawMessage {
		return []json.RawMessage{json.RawMessage(`{"role":"user","content":[{"type":"image_url","image_url":{"url":"` + url + `"}` + uuid + `}]}`)}
	}
	render := func(uuid string, kwargs string) (*ChatPrompt, features.Modality) {
		in := ChatInput{Messages: typedMessages(msgs(uuid)), AddGenerationPrompt: true, OmitMMKwargs: true}
		if kwargs != "" {
			in.MMProcessorKwargs = mustNode(kwargs)
		}
		p, err := r.RenderChat(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		return p, renderedFeatures(t, p)
	}
	_, plain := render("", "")
	_, withUUID := render(`,"uuid":"img-1"`, "")
	if withUUID.Hashes[0] != "img-1" {
		t.Errorf("uuid hash = %q, want the uuid", withUUID.Hashes[0])
	}
	if len(plain.Hashes[0]) != 64 || plain.Hashes[0] == "img-1" {
		t.Errorf("content hash = %q", plain.Hashes[0])
	}
	_, small := render("", `{"max_pixels":50000}`)
	if small.Hashes[0] == plain.Hashes[0] {
		t.Error("mm_processor_kwargs did not change the hash")
	}
	if small.Placeholders[0].Length >= plain.Placeholders[0].Length {
		t.Errorf("max_pixels 50000 gave %d tokens, unbounded %d", small.Placeholders[0].Length, plain.Placeholders[0].Length)
	}
	_, uuidKwargs := render(`,"uuid":"img-1"`, `{"max_pixels":50000}`)
	if uuidKwargs.Hashes[0] == "img-1" || uuidKwargs.Hashes[0] == small.Hashes[0] {
		t.Errorf("uuid with kwargs hash = %q", uuidKwargs.Hashes[0])
	}
	_, err := r.RenderChat(context.Background(), ChatInput{Messages: typedMessages(msgs("")), MMProcessorKwargs: mustNode(`{"max_pixels":"x"}`)})
	var ie *ImageError
	if !errors.As(err, &ie) || ie.Status != 400 {
		t.Errorf("bad kwargs: err = %v, want a 400 ImageError", err)
	}
}

// TestRenderImageCanceled: a client that goes away cancels the fetch.
func TestRenderImageCanceled(t *testing.T) {
	arrived := make(chan struct{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		close(arrived)
		<-req.Context().Done()
	}))
	defer upstream.Close()
	r := imageRenderer(t, media.Config{AllowPrivateMediaURLs: true, Attempts: 1})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	_, err := r.RenderChat(ctx, ChatInput{Messages: typedMessages([]json.RawMessage{
		json.RawMessage(`{"role":"user","content":[{"image_url":"` + upstream.URL + `/a.png"}]}`)})})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// FuzzImageParts feeds random content parts to the image-aware message
// parser: never a panic, every failure a 400.
func FuzzImageParts(f *testing.F) {
	f.Add(`[{"type":"image_url","image_url":{"url":"u","detail":"low"}},{"type":"text","text":"` + qwenImagePlaceholder + `"}]`)
	f.Add(`[{"image_url":null,"uuid":"x"},{"type":"input_image","image_url":{"url":[1]}}]`)
	f.Fuzz(func(t *testing.T, content string) {
		raw := json.RawMessage(`{"role":"user","content":` + content + `}`)
		if !json.Valid(raw) {
			return
		}
		for _, format := range []string{FormatString, FormatOpenAI} {
			mm := &imageParts{}
			_, err := normalizeChat(typedMessages([]json.RawMessage{raw}), format, false, mm)
			var br *BadRequestError
			if err != nil && !errors.As(err, &br) {
				t.Fatalf("error is %T: %v", err, err)
			}
			if err == nil && format == FormatString && strings.Count(content, "image") < len(mm.refs) {
				t.Fatalf("%d images from %s", len(mm.refs), content)
			}
		}
	})
}

// TestRenderImageFirstError: images load in parallel, and the error
// answered is the first failing image's in prompt order.
func TestRenderImageFirstError(t *testing.T) {
	r := imageRenderer(t, media.Config{})
	part := func(name string) string {
		return `{"type":"image_url","image_url":{"url":"` + imageDataURL(t, name) + `"}}`
	}
	in := ChatInput{Messages: typedMessages([]json.RawMessage{json.RawMessage(`{"role":"user","content":[` +
		part("png_rgb_640x480.png") + `,` + part("png_rgb_3000x14_ratio214.png") + `,` + part("invalid_random.png") + `]}`)})}
	_, err := r.RenderChat(context.Background(), in)
	var ie *ImageError
	if !errors.As(err, &ie) || ie.Status != 400 || !strings.HasPrefix(ie.Message, "absolute aspect ratio must be smaller than 200") {
		t.Fatalf("err = %v, want the aspect ratio refusal of the second image", err)
	}
}

// TestSetFeaturesWritesAsCompacting: the features JSON render hands to
// GenerateRequest.SetFeatures is written byte for byte as the compacting
// path (wire.AppendRaw) writes it, with and without tensors, and with a
// client uuid holding characters the compacting path rewrites.
func TestSetFeaturesWritesAsCompacting(t *testing.T) {
	r := imageRenderer(t, media.Config{})
	url := imageDataURL(t, "png_rgb_56x30.png")
	for _, tc := range []struct {
		name, uuid string
		omit       bool
	}{
		{"kwargs", "", false},
		{"no kwargs", "", true},
		{"uuid", `,"uuid":"a\u2028b \"c\" é"`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := `{"role":"user","content":[{"type":"image_url","image_url":{"url":"` + url + `"}` + tc.uuid + `}]}`
			p, err := r.RenderChat(context.Background(), ChatInput{Messages: typedMessages([]json.RawMessage{json.RawMessage(msg)}),
				AddGenerationPrompt: true, OmitMMKwargs: tc.omit})
			if err != nil {
				t.Fatal(err)
			}
			var fast, slow protocol.GenerateRequest
			fast.SetFeatures(p.Features)
			slow.Features = p.Features.AppendJSON(nil)
			a, err := protocol.AppendJSON(nil, &fast)
			if err != nil {
				t.Fatal(err)
			}
			b, err := protocol.AppendJSON(nil, &slow)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				i := testenv.FirstDiff(a, b)
				t.Fatalf("SetFeatures writes %q, the compacting path %q (byte %d)", a[max(0, i-40):min(len(a), i+40)], b[max(0, i-40):min(len(b), i+40)], i)
			}
		})
	}
}
