package render

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vrender/vrender/imaging"
	"github.com/vrender/vrender/internal/pyfmt"
)

// errBackground is ImageMediaIO's refusal of an rgba_background_color
// (vllm/multimodal/media/image.py), a ValueError answered with 400.
const errBackground = "rgba_background_color must be a list or tuple of 3 integers in the range [0, 255]."

// loadOptions are the decoding options of a request's images: the
// server's, with the "image" entry of media_io_kwargs applied — the
// request's keys over --media-io-kwargs', key by key, as vLLM's
// merge_media_io_kwargs merges each modality. vLLM reads only
// rgba_background_color of it; other keys are ignored, as its image loader
// ignores them. reqMediaIO is protocol's decoded object (nil: none).
func (im *images) loadOptions(reqMediaIO *node) (imaging.Options, error) {
	opts := im.cfg.Load
	v, ok := imageIOKwarg(reqMediaIO, "rgba_background_color")
	if !ok {
		v, ok = imageIOKwarg(im.mediaIO, "rgba_background_color")
	}
	if !ok {
		return opts, nil
	}
	bg, ok := parseBackground(v)
	if !ok {
		return opts, &ImageError{Status: 400, Type: "BadRequestError", Message: errBackground}
	}
	opts.Background = bg
	return opts, nil
}

// imageIOKwarg is media_io_kwargs["image"][key], when both are there.
func imageIOKwarg(mediaIO *node, key string) (*node, bool) {
	if mediaIO == nil || mediaIO.Kind != jObj {
		return nil, false
	}
	image, ok := mediaIO.Get("image")
	if !ok || image.Kind != jObj {
		return nil, false
	}
	return image.Get(key)
}

// parseBackground is ImageMediaIO's check: a list of exactly three Python
// ints (bool is one: true is 1) from 0 to 255. A JSON number with a
// fraction or exponent is a float, which it refuses, and so is null.
func parseBackground(v *node) ([3]uint8, bool) {
	var bg [3]uint8
	if v.Kind != jArr || len(v.Arr) != 3 {
		return bg, false
	}
	for i, c := range v.Arr {
		switch {
		case c.Kind == jBool && c.B:
			bg[i] = 1
		case c.Kind == jBool:
			bg[i] = 0
		case c.Kind == jNum && !c.IsFloat():
			n, err := pyfmt.ParseInt(c.S)
			if err != nil || n < 0 || n > 255 {
				return bg, false
			}
			bg[i] = uint8(n)
		default:
			return bg, false
		}
	}
	return bg, true
}

// CheckMediaIOKwargs reports what is wrong with a --media-io-kwargs value,
// which ImageConfig.MediaIOKwargs takes.
func CheckMediaIOKwargs(raw json.RawMessage) error {
	_, err := parseServerMediaIO(raw)
	return err
}

// parseServerMediaIO reads --media-io-kwargs: a JSON object of objects, as
// vLLM's config takes it, whose image background is checked now rather
// than on every image request, where vLLM would refuse each one.
func parseServerMediaIO(raw json.RawMessage) (*node, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	n, err := parseJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("--media-io-kwargs: %w", err)
	}
	if n.Kind != jObj {
		return nil, errors.New("--media-io-kwargs must be a JSON object of objects keyed by modality")
	}
	for i, k := range n.Keys {
		if n.Vals[i].Kind != jObj {
			return nil, fmt.Errorf("--media-io-kwargs: %q must be an object", k)
		}
	}
	if v, ok := imageIOKwarg(n, "rgba_background_color"); ok {
		if _, ok := parseBackground(v); !ok {
			return nil, fmt.Errorf("--media-io-kwargs: %s", errBackground)
		}
	}
	return n, nil
}
