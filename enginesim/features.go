package enginesim

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/kvindex"
	"github.com/vrender/vrender/protocol"
)

// qwenMerge is the spatial merge of every Qwen-VL family model (merge_size
// 2): an image's placeholder has t·h·w/4 tokens.
const qwenMerge = 2

// mmInput is what engine-sim takes from a request's features: its items
// in prompt order (vLLM's mm_features, sorted by offset across
// modalities), which key the prompt's blocks, and the images it reports.
type mmInput struct {
	items  []kvindex.MMItem
	images []seenImage
	// brought are the items whose kwargs the request carries: they enter
	// the engine's item cache once the request is accepted.
	brought []broughtItem
	// missing are the hashes of null items the item cache does not hold:
	// vLLM's MultiModalCacheMissError, the request fails (answerMiss).
	missing []string
}

// broughtItem is an item a request carries, with its size in the item
// cache (its msgpack's length).
type broughtItem struct {
	img  seenImage
	size int64
}

// seenImage is one image as the answer describes it.
type seenImage struct {
	hash string
	grid [3]int64 // zero when the request carries no grid for it
	// patch is the side of a vision patch in pixels, read from
	// pixel_values' width (3·2·patch²); 0 when unknown.
	patch int64
}

// acceptFeatures checks a generate request's features as vLLM's generate
// route does (serve_tokens at bf578e1, and newer vLLM's
// engine_input_from_features): the features model's validators, every
// placeholder inside the prompt, every kwargs and metadata item decodable.
// A null item ("from cache") is resolved from the engine's item cache
// unless the request has ec_transfer_params or requires_kv; one the cache
// does not hold is listed in missing (the engine core's
// MultiModalCacheMissError, see answerMiss). A Qwen image
// item's grid must make as many tokens as its placeholder has: vLLM finds
// that only in the model runner, which fails the engine (500); engine-sim
// refuses the request with the runner's text instead. Failures are 400
// BadRequestError, as vLLM's ValueErrors are. n is the features member of
// the request's body (nil when absent).
func (s *Sim) acceptFeatures(req *protocol.GenerateRequest, n *wire.Node) (mmInput, *apiError) {
	if n == nil || n.Kind == wire.Null {
		return mmInput{}, nil
	}
	f, err := features.DecodeWith(n, s.decoded.decode)
	if err != nil {
		return mmInput{}, badRequest(err.Error())
	}
	ec := len(req.ECTransferParams) > 0 && string(req.ECTransferParams) != "null"
	// Null items are checked below, against the item cache.
	if err := f.CheckPrompt(len(req.TokenIDs), true); err != nil {
		return mmInput{}, badRequest(err.Error())
	}
	var cached []seenImage
	var missing []string
	for _, m := range f.Modalities {
		for j, h := range m.Hashes {
			if itemAt(m.Kwargs, j) != nil {
				continue
			}
			img, ok := s.items.Get(h)
			switch {
			case ok:
				cached = append(cached, img)
			case broughtBefore(m, j):
				// The receiver fills items in prompt order, keeping each it
				// is sent: an item repeated later in the prompt resolves
				// from its first occurrence.
			case !ec && !f.RequiresKV:
				missing = append(missing, h)
			}
		}
	}
	in := mmInput{items: kvindex.FeatureItems(&f), missing: missing}
	for _, m := range f.Modalities {
		if m.Name != "image" {
			continue
		}
		for j, h := range m.Hashes {
			p := m.Placeholders[j]
			img, err := readImage(h, itemAt(m.Kwargs, j), itemAt(m.Metadata, j))
			if err != nil {
				return mmInput{}, badRequest(fmt.Sprintf("image item %d: %v", j, err))
			}
			if itemAt(m.Kwargs, j) == nil {
				// What the engine cached of the item it was sent before
				// (its size too), over the grid of its metadata item.
				for _, c := range append(cached, in.images...) {
					if c.hash == h {
						img = c
						break
					}
				}
			}
			if img.grid[0] > 0 && !slices.Contains(missing, h) {
				tokens := img.grid[0] * img.grid[1] * img.grid[2] / (qwenMerge * qwenMerge)
				if tokens != int64(p.Length) {
					return mmInput{}, badRequest(fmt.Sprintf(
						"Attempted to assign %d multimodal tokens to %d placeholders", tokens, p.Length))
				}
			}
			in.images = append(in.images, img)
		}
	}
	for _, m := range f.Modalities {
		for j, h := range m.Hashes {
			b := itemAt(m.Kwargs, j)
			if b == nil {
				continue
			}
			img := seenImage{hash: h}
			for _, seen := range in.images {
				if seen.hash == h {
					img = seen
				}
			}
			in.brought = append(in.brought, broughtItem{img: img, size: int64(len(b))})
		}
	}
	return in, nil
}

// broughtBefore reports whether an item of m before j carries the kwargs
// of item j's hash.
func broughtBefore(m features.Modality, j int) bool {
	for i := range j {
		if m.Hashes[i] == m.Hashes[j] && itemAt(m.Kwargs, i) != nil {
			return true
		}
	}
	return false
}

func itemAt(items []features.ItemBytes, j int) []byte {
	if j < len(items) {
		return items[j].Bytes()
	}
	return nil
}

// readImage reads an image's grid from its kwargs item, or from its
// metadata-only item when the kwargs are null; an item that is not a Qwen
// image (no image_grid_thw) leaves the grid unknown.
func readImage(hash string, kwargs, meta []byte) (seenImage, error) {
	img := seenImage{hash: hash}
	b := kwargs
	if b == nil {
		b = meta
	}
	if b == nil {
		return img, nil
	}
	it, err := features.DecodeItem(b) // CheckPrompt decoded it: cannot fail
	if err != nil {
		return img, err
	}
	g, ok := it.Elems["image_grid_thw"]
	if !ok {
		return img, nil
	}
	if kwargs != nil {
		if pv, ok := it.Elems["pixel_values"].Data.(features.Tensor); ok && len(pv.Shape) == 2 {
			q, err := it.QwenImage(int(pv.Shape[1]))
			if err != nil {
				return img, err
			}
			img.grid = q.GridTHW
			img.patch = patchSide(pv.Shape[1])
			return img, nil
		}
	}
	gt, ok := g.Data.(features.Tensor)
	size, isInt := gridSizes[gt.DType]
	if !ok || !isInt || !slices.Equal(gt.Shape, []int64{3}) || len(gt.Data) != 3*size {
		return img, fmt.Errorf("image_grid_thw is not an integer [3] tensor")
	}
	for i := range img.grid {
		img.grid[i] = gridValue(gt.DType, gt.Data[size*i:size*(i+1)])
		if img.grid[i] <= 0 || img.grid[i] > 1<<20 {
			return img, fmt.Errorf("grid_thw %v", img.grid)
		}
	}
	return img, nil
}

// gridSizes are the integer dtypes an image_grid_thw may have: the
// processor's is int64, a client's image_embeds part may send another
// (vLLM's TensorSchema checks the shape only).
var gridSizes = map[string]int{"int64": 8, "int32": 4, "int16": 2, "int8": 1, "uint8": 1}

// gridValue reads one little-endian grid entry of dtype.
func gridValue(dtype string, b []byte) int64 {
	switch dtype {
	case "int64":
		return int64(binary.LittleEndian.Uint64(b))
	case "int32":
		return int64(int32(binary.LittleEndian.Uint32(b)))
	case "int16":
		return int64(int16(binary.LittleEndian.Uint16(b)))
	case "int8":
		return int64(int8(b[0]))
	}
	return int64(b[0])
}

// patchSide is the patch side of pixel_values rows of cols values: Qwen's
// rows are 3 channels × temporal patch 2 × side²; 0 when cols is not that.
func patchSide(cols int64) int64 {
	if cols%6 != 0 {
		return 0
	}
	p := int64(math.Round(math.Sqrt(float64(cols / 6))))
	if p*p*6 != cols {
		return 0
	}
	return p
}

// describeImages is the sentence the built-in answer starts with when the
// request has images, so a client test can see its pictures arrive: "I see
// 1 image: 1288x728 (grid 1x52x92), mm_hash 4f0c1d2e3f4a…." — width and
// height from the grid and the patch side, the grid as t×h×w, the hash's
// first 12 characters.
func describeImages(images []seenImage) string {
	if len(images) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("I see ")
	b.WriteString(strconv.Itoa(len(images)))
	if len(images) == 1 {
		b.WriteString(" image: ")
	} else {
		b.WriteString(" images: ")
	}
	for i, img := range images {
		if i > 0 {
			b.WriteString("; ")
		}
		switch {
		case img.grid[0] > 0 && img.patch > 0:
			fmt.Fprintf(&b, "%dx%d (grid %dx%dx%d), ", img.grid[2]*img.patch, img.grid[1]*img.patch,
				img.grid[0], img.grid[1], img.grid[2])
		case img.grid[0] > 0:
			fmt.Fprintf(&b, "grid %dx%dx%d, ", img.grid[0], img.grid[1], img.grid[2])
		default:
			b.WriteString("size unknown, ")
		}
		b.WriteString("mm_hash ")
		if len(img.hash) > 12 {
			b.WriteString(img.hash[:12])
			b.WriteString("…")
		} else {
			b.WriteString(img.hash)
		}
	}
	b.WriteString(". ")
	return b.String()
}
