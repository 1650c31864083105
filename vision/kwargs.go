package vision

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/vrender/vrender/internal/wire"
)

// Kwargs are the mm_processor_kwargs an image processor reads: the server's --mm-processor-kwargs
// with the request's merged over them key by key ([Kwargs.Over]). Keys a processor does not take are
// ignored, as vLLM drops them before calling Hugging Face.
type Kwargs struct {
	// MinPixels and MaxPixels (min_pixels, max_pixels) override the bounds of the resized area;
	// nil leaves the model's.
	MinPixels, MaxPixels *int
	// Size (size: {"shortest_edge", "longest_edge"}) overrides the same bounds; MinPixels and
	// MaxPixels win over it, as in Hugging Face.
	Size *SizeBounds
	// UseFast (use_fast) picks the torchvision backend (true, vLLM's default) or the PIL one.
	UseFast *bool
}

// SizeBounds is a Qwen2-VL style size: the resized area's lower and upper bound in pixels.
type SizeBounds struct {
	ShortestEdge, LongestEdge int
}

// Over returns k with every key base sets and k does not taken from base.
func (k Kwargs) Over(base Kwargs) Kwargs {
	if k.MinPixels == nil {
		k.MinPixels = base.MinPixels
	}
	if k.MaxPixels == nil {
		k.MaxPixels = base.MaxPixels
	}
	if k.Size == nil {
		k.Size = base.Size
	}
	if k.UseFast == nil {
		k.UseFast = base.UseFast
	}
	return k
}

// fast reports whether the torchvision backend runs (use_fast defaults to true in vLLM).
func (k Kwargs) fast() bool { return k.UseFast == nil || *k.UseFast }

// pixelBounds applies the kwargs to a model's bounds.
func (k Kwargs) pixelBounds(minPixels, maxPixels int) (int, int) {
	if k.Size != nil {
		minPixels, maxPixels = k.Size.ShortestEdge, k.Size.LongestEdge
	}
	if k.MinPixels != nil {
		minPixels = *k.MinPixels
	}
	if k.MaxPixels != nil {
		maxPixels = *k.MaxPixels
	}
	return minPixels, maxPixels
}

// ParseKwargs reads an mm_processor_kwargs JSON object (the server's --mm-processor-kwargs); see
// KwargsOf. Text that is not one JSON object is an *Error of kind InvalidKwargs.
func ParseKwargs(raw []byte) (Kwargs, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return Kwargs{}, nil
	}
	n, err := wire.Parse(raw)
	if err != nil || n.Kind != wire.Object && n.Kind != wire.Null {
		return Kwargs{}, &Error{Kind: InvalidKwargs, Message: "mm_processor_kwargs must be a JSON object"}
	}
	return KwargsOf(n)
}

// KwargsOf reads an mm_processor_kwargs object from its tree (a request's, decoded once with the
// body). nil, null and absent keys leave a setting unset; a value of the wrong type is an *Error of
// kind InvalidKwargs.
func KwargsOf(n *wire.Node) (Kwargs, error) {
	var k Kwargs
	if n.IsNull() {
		return k, nil
	}
	if n.Kind != wire.Object {
		return k, &Error{Kind: InvalidKwargs, Message: "mm_processor_kwargs must be a JSON object"}
	}
	var err error
	if k.MinPixels, err = pixelsKwarg(n, "min_pixels"); err != nil {
		return k, err
	}
	if k.MaxPixels, err = pixelsKwarg(n, "max_pixels"); err != nil {
		return k, err
	}
	if v, _ := n.Get("use_fast"); !v.IsNull() {
		if v.Kind != wire.Bool {
			return k, &Error{Kind: InvalidKwargs, Message: "mm_processor_kwargs.use_fast must be a boolean"}
		}
		k.UseFast = &v.B
	}
	if s, _ := n.Get("size"); !s.IsNull() {
		if s.Kind != wire.Object {
			return k, &Error{Kind: InvalidKwargs, Message: "mm_processor_kwargs.size must be an object"}
		}
		lo, err := pixelsKwarg(s, "shortest_edge")
		if err != nil {
			return k, err
		}
		hi, err := pixelsKwarg(s, "longest_edge")
		if err != nil {
			return k, err
		}
		if lo == nil || hi == nil {
			return k, &Error{Kind: InvalidKwargs, Message: "mm_processor_kwargs.size must contain 'shortest_edge' and 'longest_edge' keys"}
		}
		k.Size = &SizeBounds{ShortestEdge: *lo, LongestEdge: *hi}
	}
	return k, nil
}

// pixelsKwarg reads member key of the object m, a non-negative whole number of pixels; 1e6 is
// accepted as Python compares it the same as 1000000.
func pixelsKwarg(m *wire.Node, key string) (*int, error) {
	v, _ := m.Get(key)
	if v.IsNull() {
		return nil, nil
	}
	f, err := strconv.ParseFloat(v.S, 64)
	if v.Kind != wire.Number || err != nil || f < 0 || f != math.Trunc(f) || f > 1<<53 {
		return nil, &Error{Kind: InvalidKwargs, Message: fmt.Sprintf("mm_processor_kwargs.%s must be a non-negative integer, got %s", key, truncateRaw(v.Raw))}
	}
	n := int(f)
	return &n, nil
}

// truncateRaw keeps an echoed client value short, cutting at a character boundary.
func truncateRaw(v []byte) string {
	const limit = 40
	s := string(bytes.TrimSpace(v))
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
