package render

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/vrender/vrender/imaging"
	"github.com/vrender/vrender/media"
)

// TestLoadOptions: media_io_kwargs' image rgba_background_color, the
// request's over --media-io-kwargs' key by key, checked as ImageMediaIO
// checks it.
func TestLoadOptions(t *testing.T) {
	white, black := [3]uint8{255, 255, 255}, [3]uint8{0, 0, 0}
	tests := []struct {
		name, server, request string
		want                  [3]uint8
		wantErr               string
	}{
		{"none", "", "", white, ""},
		{"request", "", `{"image":{"rgba_background_color":[0,0,0]}}`, black, ""},
		{"server", `{"image":{"rgba_background_color":[1,2,3]}}`, "", [3]uint8{1, 2, 3}, ""},
		{"request wins", `{"image":{"rgba_background_color":[1,2,3]}}`, `{"image":{"rgba_background_color":[0,0,0]}}`, black, ""},
		{"other request keys keep the server's", `{"image":{"rgba_background_color":[1,2,3]}}`, `{"image":{"foo":1},"video":{}}`, [3]uint8{1, 2, 3}, ""},
		{"other modality only", "", `{"video":{"rgba_background_color":[0,0,0]}}`, white, ""},
		{"bools are ints", "", `{"image":{"rgba_background_color":[true,false,255]}}`, [3]uint8{1, 0, 255}, ""},
		{"minus zero is an int", "", `{"image":{"rgba_background_color":[-0,0,0]}}`, black, ""},
		{"two values", "", `{"image":{"rgba_background_color":[0,0]}}`, white, errBackground},
		{"four values", "", `{"image":{"rgba_background_color":[0,0,0,0]}}`, white, errBackground},
		{"float", "", `{"image":{"rgba_background_color":[0,0,0.0]}}`, white, errBackground},
		{"exponent", "", `{"image":{"rgba_background_color":[0,0,1e2]}}`, white, errBackground},
		{"256", "", `{"image":{"rgba_background_color":[0,0,256]}}`, white, errBackground},
		{"negative", "", `{"image":{"rgba_background_color":[0,-1,0]}}`, white, errBackground},
		{"string", "", `{"image":{"rgba_background_color":"black"}}`, white, errBackground},
		{"null", "", `{"image":{"rgba_background_color":null}}`, white, errBackground},
		{"object", "", `{"image":{"rgba_background_color":{"r":0}}}`, white, errBackground},
		{"string item", "", `{"image":{"rgba_background_color":["0",0,0]}}`, white, errBackground},
		{"huge", "", `{"image":{"rgba_background_color":[0,0,99999999999999999999999]}}`, white, errBackground},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mediaIO, err := parseServerMediaIO(json.RawMessage(tt.server))
			if err != nil {
				t.Fatal(err)
			}
			im := &images{cfg: ImageConfig{Load: imaging.DefaultOptions()}, mediaIO: mediaIO}
			opts, err := im.loadOptions(kwargsNode([]byte(tt.request)))
			var ie *ImageError
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("error %v", err)
			case tt.wantErr != "" && (!errors.As(err, &ie) || ie.Status != 400 || ie.Type != "BadRequestError" || ie.Message != tt.wantErr):
				t.Fatalf("error %v, want a 400 %q", err, tt.wantErr)
			case tt.wantErr == "" && opts.Background != tt.want:
				t.Fatalf("background %v, want %v", opts.Background, tt.want)
			}
			if opts.MaxPixels != imaging.DefaultMaxPixels {
				t.Errorf("MaxPixels changed to %d", opts.MaxPixels)
			}
		})
	}
}

func TestCheckMediaIOKwargs(t *testing.T) {
	for in, want := range map[string]string{
		``:                                      "",
		`{}`:                                    "",
		`{"image":{},"video":{"num_frames":4}}`: "",
		`[1]`:                                   "--media-io-kwargs must be a JSON object of objects keyed by modality",
		`{"image":1}`:                           `--media-io-kwargs: "image" must be an object`,
		`{"image":{"rgba_background_color":[1]}}`: "--media-io-kwargs: " + errBackground,
	} {
		err := CheckMediaIOKwargs(json.RawMessage(in))
		if got := errText(err); got != want {
			t.Errorf("CheckMediaIOKwargs(%s) = %q, want %q", in, got, want)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestMediaIOKwargsRender: the background reaches decoding (a transparent
// PNG renders differently on black), the cache keeps the two apart and each
// answer equals the uncached one; a bad background is refused before any
// fetch, and only when the request has images.
func TestMediaIOKwargsRender(t *testing.T) {
	cached := imageRenderer(t, media.Config{})
	plain := imageRenderer(t, media.Config{}, uncached)
	white := imageRequest(t, "", "png_rgba_320x240.png")
	black := white
	black.MediaIOKwargs = mustNode(`{"image":{"rgba_background_color":[0,0,0]}}`)
	wantWhite, wantBlack := renderAnswer(t, plain, white), renderAnswer(t, plain, black)
	if wantWhite == wantBlack {
		t.Fatal("the background did not change the pixels of a transparent image")
	}
	for range 2 {
		if renderAnswer(t, cached, white) != wantWhite || renderAnswer(t, cached, black) != wantBlack {
			t.Fatal("a cached answer differs from the uncached one")
		}
	}
	if st := cached.ImageCacheStats(); st.Misses != 2 || st.Hits != 2 {
		t.Errorf("stats %+v, want 2 misses and 2 hits", st)
	}
	bad := ChatInput{Messages: typedMessages([]json.RawMessage{json.RawMessage(`{"role":"user","content":[{"image_url":"http://127.0.0.1:9/a.png"}]}`)}),
		MediaIOKwargs: mustNode(`{"image":{"rgba_background_color":[0,0,300]}}`)}
	if got := renderAnswer(t, cached, bad); got != "error: "+errBackground {
		t.Errorf("bad background and an unfetchable URL: %s", got)
	}
	noImage := ChatInput{Messages: typedMessages([]json.RawMessage{json.RawMessage(`{"role":"user","content":"hi"}`)}), MediaIOKwargs: bad.MediaIOKwargs}
	if got := renderAnswer(t, cached, noImage); strings.HasPrefix(got, "error") {
		t.Errorf("a bad background refused a request without images: %s", got)
	}
}

// TestMaxImagePixelsRender: VLLM_MAX_IMAGE_PIXELS refuses with vLLM's own
// message, on the full path and the header-only one alike.
func TestMaxImagePixelsRender(t *testing.T) {
	r := imageRenderer(t, media.Config{}, func(c *ImageConfig) { c.Load.MaxPixels = 300 * 240 })
	const want = "Image dimensions 320x240 (76800 pixels) exceed the maximum of 72000 pixels. Set VLLM_MAX_IMAGE_PIXELS to increase this limit."
	in := imageRequest(t, "", "png_rgba_320x240.png")
	for _, omit := range []bool{false, true} {
		in.OmitMMKwargs = omit
		_, err := r.RenderChat(context.Background(), in)
		var ie *ImageError
		if !errors.As(err, &ie) || ie.Status != 400 || ie.Type != "BadRequestError" || ie.Message != want {
			t.Errorf("return_mm_kwargs %v: %v, want a 400 %q", !omit, err, want)
		}
	}
	in = imageRequest(t, "", "png_rgb_56x30.png")
	if got := renderAnswer(t, r, in); strings.HasPrefix(got, "error") {
		t.Errorf("an image under the limit: %s", got)
	}
}

// FuzzLoadOptions feeds random media_io_kwargs: never a panic; either a
// background that came from the request or the server, or vLLM's 400.
func FuzzLoadOptions(f *testing.F) {
	f.Add(`{"image":{"rgba_background_color":[0,0,0]}}`)
	f.Add(`{"image":{"rgba_background_color":[true,1e2,-0]},"video":{}}`)
	f.Add(`{"image":{"rgba_background_color":[1,2,3,4]}}`)
	im := &images{cfg: ImageConfig{Load: imaging.DefaultOptions()}}
	f.Fuzz(func(t *testing.T, in string) {
		req, err := parseJSON([]byte(in))
		if err != nil || !json.Valid([]byte(in)) {
			return
		}
		opts, err := im.loadOptions(req)
		var ie *ImageError
		var br *BadRequestError
		switch {
		case err == nil:
			if _, given := imageIOKwarg(req, "rgba_background_color"); !given && opts.Background != [3]uint8{255, 255, 255} {
				t.Fatalf("background %v without rgba_background_color", opts.Background)
			}
		case errors.As(err, &ie):
			if ie.Status != 400 || ie.Message != errBackground {
				t.Fatalf("%+v", ie)
			}
		case errors.As(err, &br):
		default:
			t.Fatalf("error %T: %v", err, err)
		}
	})
}
