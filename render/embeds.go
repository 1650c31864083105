package render

import (
	"context"
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/tensorfile"
)

// Messages vLLM (bf578e1) answers image_embeds parts with, all 400.
const (
	errEmbedsGate     = "You must set `--enable-mm-embeds` to input `image_embeds`"
	errNotMultimodal  = "The model is not multimodal."
	errEmbedsMixed    = "Mixing raw image and embedding inputs is not allowed"
	errEmbedsSameKeys = "All dictionaries in the list of embeddings must have the same keys."
)

// Qwen2-VL's data parser takes a dict with these fields (DictEmbeddingItems'
// required_fields); the other names its field factory knows would bring
// pixel or video inputs into an embeddings item.
const (
	keyEmbeds = "image_embeds"
	keyGrid   = "image_grid_thw"
)

var qwenOtherFields = map[string]bool{"pixel_values": true, "pixel_values_videos": true, "video_embeds": true,
	"video_grid_thw": true, "timestamps": true}

// embedsPart is one image_embeds part as vLLM's parse_image_embeds leaves
// it: a tensor (the base64 string form) or a dict of named tensors, in the
// order sent, and the part's uuid.
type embedsPart struct {
	single  *tensorfile.Tensor
	names   []string
	tensors []tensorfile.Tensor
	uuid    *string
}

// addEmbeds parses an image_embeds part (typed, or type-less with the
// image_embeds key): the --enable-mm-embeds gate, then each base64 payload
// decoded and loaded as vLLM's ImageEmbeddingMediaIO does. The part
// takes an image's place in the prompt.
func (mm *imageParts) addEmbeds(p *protocol.ContentPart) (parsedPart, bool, error) {
	if mm.im == nil || !mm.im.cfg.EnableMMEmbeds {
		return parsedPart{}, false, badRequest(errEmbedsGate)
	}
	if p.BadUUID != nil {
		return parsedPart{}, false, badParam("uuid", "uuid must be a string, got %s", pyType(p.BadUUID))
	}
	uuid, v := p.UUID, p.Media
	part := embedsPart{uuid: uuid}
	switch {
	case v.IsNull():
		if uuid != nil {
			// A uuid without data refers to the processor cache, which the
			// render tier does not keep (skip_mm_cache).
			return parsedPart{}, false, badParam("image_embeds",
				"Image embeddings with uuid %s have no data and are not cached on this render server", pyStrRepr(*uuid))
		}
		return parsedPart{}, false, badParam("image_embeds", "image_embeds is null and the part has no uuid")
	case v.Kind == jStr:
		t, err := mm.im.loadEmbeds(v.S)
		if err != nil {
			return parsedPart{}, false, err
		}
		part.single = &t
	case v.Kind == jObj:
		for i, k := range v.Keys {
			s, isStr := v.Vals[i].Text()
			if !isStr {
				return parsedPart{}, false, badRequest(
					"argument should be a bytes-like object or ASCII string, not '%s'", pyType(v.Vals[i]))
			}
			t, err := mm.im.loadEmbeds(s)
			if err != nil {
				return parsedPart{}, false, err
			}
			part.names = append(part.names, k)
			part.tensors = append(part.tensors, t)
		}
	default:
		return parsedPart{}, false, badParam("image_embeds",
			"image_embeds must be a base64 string or an object of base64 strings, got %s", pyType(v))
	}
	mm.embeds = append(mm.embeds, part)
	return parsedPart{image: true}, true, nil
}

// loadEmbeds is ImageEmbeddingMediaIO.load_base64: strict base64, then a
// .npy file or a torch.save archive, within --max-media-bytes.
func (im *images) loadEmbeds(b64 string) (tensorfile.Tensor, error) {
	data, err := im.cfg.Fetcher.DecodeBase64(b64)
	if err != nil {
		return tensorfile.Tensor{}, imageError(err)
	}
	t, err := tensorfile.Load(data, im.cfg.Fetcher.MaxMediaBytes())
	if err != nil {
		return tensorfile.Tensor{}, &BadRequestError{Message: err.Error(), Err: err}
	}
	return t, nil
}

// checkEmbeds applies vLLM's rules to a request's image_embeds parts once
// all messages are parsed: the per-prompt limit (which embeddings skip when
// --enable-mm-embeds is set and the image limit is 0), no mixing with
// images, then the Qwen2-VL data parser's form — a dict with image_embeds
// and image_grid_thw, the same keys in every part — giving the items.
func (im *images) checkEmbeds(mm *imageParts) ([]features.QwenEmbeds, error) {
	if len(mm.embeds) == 0 {
		return nil, nil
	}
	if im.cfg.Limit != 0 {
		if err := im.checkLimit(len(mm.embeds)); err != nil {
			return nil, err
		}
	}
	if len(mm.refs) > 0 {
		return nil, badRequest(errEmbedsMixed)
	}
	first := mm.embeds[0]
	if first.single != nil {
		// vLLM hands the bare tensor to the Qwen2-VL processor, which has
		// no image_grid_thw for it and fails inside HF's processor.
		return nil, badParam("image_embeds", "Qwen2-VL-family models take image_embeds as an object of base64 tensors "+
			"with the keys 'image_embeds' and 'image_grid_thw', not a single tensor")
	}
	out := make([]features.QwenEmbeds, len(mm.embeds))
	for i, part := range mm.embeds {
		if part.single != nil || !sameKeys(part.names, first.names) {
			return nil, badRequest(errEmbedsSameKeys)
		}
		var item features.QwenEmbeds
		var haveEmbeds, haveGrid bool
		for j, name := range part.names {
			switch {
			case name == keyEmbeds:
				item.Embeds, haveEmbeds = part.tensors[j], true
			case name == keyGrid:
				item.GridTHW, haveGrid = part.tensors[j], true
			case qwenOtherFields[name]:
				return nil, badParam("image_embeds", "image_embeds may not carry %s: vrender takes image_embeds and image_grid_thw", pyStrRepr(name))
			}
			// vLLM drops names its field factory does not know.
		}
		if !haveEmbeds || !haveGrid {
			return nil, badRequest("The data should contain the fields: {'image_embeds', 'image_grid_thw'}, "+
				"but only found the following keys: %s", pySet(part.names))
		}
		if err := im.checkEmbedsItem(i, item, out[0]); err != nil {
			return nil, err
		}
		out[i] = item
	}
	return out, nil
}

// checkEmbedsItem checks one item's shapes and dtypes: image_embeds
// [tokens, hidden], image_grid_thw an integer [3] of positive sizes whose
// tokens, t·h·w // merge², are image_embeds' rows; every part's tensors of
// one dtype and hidden size, as torch.cat would need them. vLLM checks none
// of this in its renderer: it slices the rows by the grid (silently
// dropping or lacking rows) and its model runner fails the engine later.
func (im *images) checkEmbedsItem(i int, it, first features.QwenEmbeds) error {
	e, g := it.Embeds, it.GridTHW
	if len(e.Shape) != 2 {
		return badParam("image_embeds", "image_embeds [%d] must be 2D (num_tokens, hidden_size), got %dD tensor with shape %s",
			i, len(e.Shape), tensorfile.ShapeRepr(e.Shape))
	}
	if len(g.Shape) != 1 || g.Shape[0] != 3 || !g.DType.IsInteger() {
		return badParam("image_embeds", "image_grid_thw [%d] must be an integer tensor of shape (3,), got %s %s",
			i, g.DType, tensorfile.ShapeRepr(g.Shape))
	}
	if i > 0 && (e.DType != first.Embeds.DType || g.DType != first.GridTHW.DType || e.Shape[1] != first.Embeds.Shape[1]) {
		return badParam("image_embeds", "image_embeds [%d] is %s with hidden size %d and image_grid_thw %s, "+
			"unlike the first part's %s, %d and %s", i, e.DType, e.Shape[1], g.DType,
			first.Embeds.DType, first.Embeds.Shape[1], first.GridTHW.DType)
	}
	grid, err := gridValues(g)
	if err != nil {
		return badParam("image_embeds", "image_grid_thw [%d]: %v", i, err)
	}
	tokens, ok := gridTokens(grid, im.merge)
	if !ok || tokens == 0 {
		return badParam("image_embeds", "image_grid_thw [%d] %v gives no placeholder tokens", i, grid)
	}
	if int64(e.Shape[0]) != tokens {
		return badParam("image_embeds", "image_embeds [%d] has %d rows, but image_grid_thw %v gives %d placeholder tokens (t·h·w // %d)",
			i, e.Shape[0], grid, tokens, im.merge*im.merge)
	}
	return nil
}

// gridValues reads an integer [3] tensor's values; each must be positive.
func gridValues(g tensorfile.Tensor) ([3]int64, error) {
	var out [3]int64
	size := g.DType.Size()
	for k := range out {
		b := g.Data[k*size : (k+1)*size]
		var u uint64
		for j := size - 1; j >= 0; j-- {
			u = u<<8 | uint64(b[j])
		}
		v := int64(u)
		switch g.DType {
		case tensorfile.Int8:
			v = int64(int8(u))
		case tensorfile.Int16:
			v = int64(int16(u))
		case tensorfile.Int32:
			v = int64(int32(u))
		}
		if v <= 0 || g.DType == tensorfile.UInt64 && u > 1<<62 {
			return out, fmt.Errorf("sizes must be positive, got %d", v)
		}
		out[k] = v
	}
	return out, nil
}

// gridTokens is t·h·w // merge²; ok is false when the product overflows.
func gridTokens(grid [3]int64, merge int) (int64, bool) {
	p := uint64(1)
	for _, v := range grid {
		hi, lo := bits.Mul64(p, uint64(v))
		if hi != 0 || lo > 1<<62 {
			return 0, false
		}
		p = lo
	}
	return int64(p) / int64(merge*merge), true
}

// expandEmbeds expands each image pad of ids to its item's rows and builds
// the features: hashes (EmbedsHash), placeholders, and, when withKwargs,
// the items as sent. When the answer carries the tensors, their cost is
// reserved from the image memory budget first, as images reserve theirs:
// the tensors are loaded while the messages are parsed (each within
// --max-media-bytes), and the answer that carries them is built only once
// the budget has room.
func (im *images) expandEmbeds(ctx context.Context, items []features.QwenEmbeds, uuids []*string, ids []int, reqKwargs *node, withKwargs bool) ([]int, *features.Features, error) {
	if withKwargs {
		release, err := im.reserveBytes(ctx, embedsCost(items))
		if err != nil {
			return nil, nil, err
		}
		defer release()
	}
	numTokens := make([]int, len(items))
	for i, it := range items {
		numTokens[i] = it.Embeds.Shape[0]
	}
	out, places, err := im.expandPads(ids, numTokens)
	if err != nil {
		return nil, nil, err
	}
	fi := make([]features.EmbedsItem, len(items))
	for i, it := range items {
		h, err := im.cfg.Hasher.EmbedsHash(it, uuids[i], reqKwargs)
		if err != nil {
			return nil, nil, fmt.Errorf("render: hashing image_embeds: %w", err)
		}
		fi[i] = features.EmbedsItem{Hash: h, Placeholder: places[i], Embeds: it}
	}
	f, err := features.QwenEmbedsFeatures(fi, features.Options{Kwargs: withKwargs})
	if err != nil {
		return nil, nil, fmt.Errorf("render: image_embeds features: %w", err)
	}
	return out, &f, nil
}

func sameKeys(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	sa, sb := slices.Clone(a), slices.Clone(b)
	slices.Sort(sa)
	slices.Sort(sb)
	return slices.Equal(sa, sb)
}

// pySet is the repr of a set of names (sorted: Python's order varies).
func pySet(names []string) string {
	if len(names) == 0 {
		return "set()"
	}
	s := slices.Clone(names)
	slices.Sort(s)
	for i, n := range s {
		s[i] = pyStrRepr(n)
	}
	return "{" + strings.Join(s, ", ") + "}"
}

// parseEmbedsPart parses an image_embeds part; a model without an image
// processor answers vLLM's get_multimodal_config refusal.
func parseEmbedsPart(p *protocol.ContentPart, mm *imageParts) (parsedPart, bool, error) {
	if mm == nil {
		return parsedPart{}, false, badRequest(errNotMultimodal)
	}
	return mm.addEmbeds(p)
}

func (mm *imageParts) embedsUUIDs() []*string {
	out := make([]*string, len(mm.embeds))
	for i, e := range mm.embeds {
		out[i] = e.uuid
	}
	return out
}
