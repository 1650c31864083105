package features

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/vrender/vrender/internal/wire"
)

// Placeholder is PlaceholderRangeInfo: where an item's tokens sit in the
// expanded prompt.
type Placeholder struct {
	Offset int
	Length int
	// IsEmbed marks which of the Length tokens are embeddings, for models
	// with sparse masks; nil (always, for Qwen images) omits it.
	IsEmbed []bool
}

// Modality is one key of the features maps, with its items in prompt
// order: Hashes, Placeholders, Kwargs and Metadata are parallel.
type Modality struct {
	Name         string
	Hashes       []string
	Placeholders []Placeholder
	// Kwargs holds each item's msgpack (written as base64); a null entry
	// is null, "resolve from the engine's cache".
	Kwargs []ItemBytes
	// Metadata holds each item's metadata-only msgpack (null entry: null).
	Metadata []ItemBytes
}

// Features is MultiModalFeatures.
type Features struct {
	Modalities []Modality
	// KwargsData makes kwargs_data an object of the modalities' Kwargs;
	// false writes null (a render request with return_mm_kwargs false).
	KwargsData bool
	// MetadataMember writes the mm_metadata member (newer vLLM's model;
	// bf578e1's has none): an object of the modalities' Metadata when
	// MetadataData, else null.
	MetadataMember bool
	MetadataData   bool
	// RequiresKV and KVHandoff are newer vLLM's decoder-KV continuation
	// (written only when set, as its model excludes them otherwise).
	RequiresKV bool
	KVHandoff  *KVHandoff
}

// KVHandoff is MultiModalKvInfo.
type KVHandoff struct {
	Version          int
	ModelFingerprint string
	PositionState    string
}

// Image is what the render step knows of one image for its features.
type Image struct {
	Hash        string
	Placeholder Placeholder
	Processed   QwenImage
}

// Options are the render request's choices.
type Options struct {
	// Kwargs is the request's return_mm_kwargs (default true in vLLM):
	// false answers hashes and placeholders only.
	Kwargs bool
	// Metadata writes newer vLLM's mm_metadata member (the
	// disaggregated-prefill subset, null when Kwargs is false); bf578e1 has
	// no such member.
	Metadata bool
}

// QwenImageFeatures builds the features of a prompt's images, which one
// processor call made (cols as for QwenItems).
func QwenImageFeatures(images []Image, cols int, opts Options) (Features, error) {
	return newImageFeatures(len(images),
		func(i int) (string, Placeholder) { return images[i].Hash, images[i].Placeholder },
		func() ([]ItemBytes, error) {
			processed := make([]QwenImage, len(images))
			for i, img := range images {
				processed[i] = img.Processed
			}
			return QwenItems(processed, cols)
		},
		func(i int) []byte { return QwenMetadata(images[i].Processed) }, opts)
}

// newImageFeatures builds the features of n image items: item gives one's
// hash and placeholder, kwargs encodes every item's kwargs (called only
// when opts.Kwargs asks for them), metadata one item's metadata item.
func newImageFeatures(n int, item func(i int) (string, Placeholder), kwargs func() ([]ItemBytes, error),
	metadata func(i int) []byte, opts Options) (Features, error) {
	m := Modality{Name: "image", Hashes: make([]string, n), Placeholders: make([]Placeholder, n)}
	for i := range n {
		m.Hashes[i], m.Placeholders[i] = item(i)
	}
	withKwargs := opts.Kwargs && n > 0
	if withKwargs {
		items, err := kwargs()
		if err != nil {
			return Features{}, err
		}
		m.Kwargs = items
		if opts.Metadata {
			m.Metadata = make([]ItemBytes, n)
			for i := range n {
				m.Metadata[i] = RawItem(Blob{metadata(i)})
			}
		}
	}
	f := Features{Modalities: []Modality{m}, KwargsData: withKwargs,
		MetadataMember: opts.Metadata, MetadataData: withKwargs && opts.Metadata}
	if err := f.Validate(); err != nil {
		return Features{}, err
	}
	return f, nil
}

// AppendJSON writes f as the render server's JSONResponse(model_dump())
// does: members in model order, compact, is_embed left out when nil. dst
// grows once, by MaxJSONLen.
func (f *Features) AppendJSON(dst []byte) []byte {
	dst = slices.Grow(dst, f.MaxJSONLen())
	return f.appendJSON(dst, nil)
}

// AppendBody is AppendJSON into a body that splices the items of pending
// pixel values in as writers that encode them while the body is written:
// dst is the body's own bytes and grows once, by MaxJSONLen - SplicedLen.
func (f *Features) AppendBody(dst []byte, body *wire.Body) []byte {
	dst = slices.Grow(dst, f.MaxJSONLen()-f.SplicedLen())
	return f.appendJSON(dst, body)
}

// SplicedLen is how many bytes of the JSON AppendBody splices in rather
// than writes.
func (f *Features) SplicedLen() int {
	n := 0
	for _, m := range f.Modalities {
		for _, items := range [][]ItemBytes{m.Kwargs, m.Metadata} {
			for _, it := range items {
				if it.stream != nil {
					n += it.stream.encodedLen()
				}
			}
		}
	}
	return n
}

// appendJSON is AppendJSON with the items' pending pixel values spliced
// into body (nil: appended).
func (f *Features) appendJSON(dst []byte, body *wire.Body) []byte {
	dst = append(dst, `{"mm_hashes":{`...)
	for i, m := range f.Modalities {
		dst = appendKey(dst, i, m.Name)
		dst = wire.AppendStrings(dst, m.Hashes)
	}
	dst = append(dst, `},"mm_placeholders":{`...)
	for i, m := range f.Modalities {
		dst = appendKey(dst, i, m.Name)
		dst = append(dst, '[')
		for j, p := range m.Placeholders {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"offset":`...)
			dst = strconv.AppendInt(dst, int64(p.Offset), 10)
			dst = append(dst, `,"length":`...)
			dst = strconv.AppendInt(dst, int64(p.Length), 10)
			if p.IsEmbed != nil {
				dst = append(dst, `,"is_embed":[`...)
				for k, e := range p.IsEmbed {
					if k > 0 {
						dst = append(dst, ',')
					}
					dst = wire.AppendBool(dst, e)
				}
				dst = append(dst, ']')
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `},"kwargs_data":`...)
	dst = f.appendItems(dst, f.KwargsData, func(m *Modality) []ItemBytes { return m.Kwargs }, body)
	if f.MetadataMember {
		dst = append(dst, `,"mm_metadata":`...)
		dst = f.appendItems(dst, f.MetadataData, func(m *Modality) []ItemBytes { return m.Metadata }, body)
	}
	if f.RequiresKV {
		dst = append(dst, `,"requires_kv":true`...)
	}
	if h := f.KVHandoff; h != nil {
		dst = append(dst, `,"kv_handoff":{"version":`...)
		dst = strconv.AppendInt(dst, int64(h.Version), 10)
		dst = append(dst, `,"model_fingerprint":`...)
		dst = wire.AppendString(dst, h.ModelFingerprint)
		dst = append(dst, `,"position_state":`...)
		dst = wire.AppendString(dst, h.PositionState)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// MaxJSONLen bounds the length of AppendJSON's output, so that a body
// holding megabytes of kwargs_data is allocated once: strings at six bytes
// a byte (the longest escape), numbers at twenty digits, items at their
// base64 length.
func (f *Features) MaxJSONLen() int {
	const fixed = 128 // member names, braces, requires_kv, kv_handoff's keys
	const number = 20
	n := fixed
	for _, m := range f.Modalities {
		n += 4 * (6*len(m.Name) + 4) // a key in each of the four maps
		for _, h := range m.Hashes {
			n += 6*len(h) + 3
		}
		for _, p := range m.Placeholders {
			n += len(`{"offset":,"length":,"is_embed":[]},`) + 2*number + len("false,")*len(p.IsEmbed)
		}
		for _, items := range [][]ItemBytes{m.Kwargs, m.Metadata} {
			n += len("null,") * (len(m.Hashes) + 1)
			for _, it := range items {
				n += base64.StdEncoding.EncodedLen(it.Len()) + 3
			}
		}
	}
	if h := f.KVHandoff; h != nil {
		n += number + 6*len(h.ModelFingerprint) + 6*len(h.PositionState) + 4
	}
	return n
}

func appendKey(dst []byte, i int, k string) []byte {
	if i > 0 {
		dst = append(dst, ',')
	}
	dst = wire.AppendString(dst, k)
	return append(dst, ':')
}

// appendItems writes {modality: [base64 | null, …]} or null.
func (f *Features) appendItems(dst []byte, present bool, items func(*Modality) []ItemBytes, body *wire.Body) []byte {
	if !present {
		return append(dst, "null"...)
	}
	dst = append(dst, '{')
	for i := range f.Modalities {
		m := &f.Modalities[i]
		dst = appendKey(dst, i, m.Name)
		dst = append(dst, '[')
		list := items(m)
		for j := range m.Hashes {
			if j > 0 {
				dst = append(dst, ',')
			}
			if j >= len(list) || list[j].IsNull() {
				dst = append(dst, "null"...)
				continue
			}
			dst = append(dst, '"')
			dst = appendItem(dst, list[j], body)
			dst = append(dst, '"')
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// Validate applies MultiModalFeatures' validators (feature_specs.py): the
// maps share their modalities and lengths, placeholders have offset >= 0,
// length > 0 and an is_embed of that length, and are sorted and apart
// across modalities; requires_kv needs kv_handoff, hashes and no kwargs.
func (f *Features) Validate() error {
	seen := make(map[string]bool, len(f.Modalities))
	var ranges [][2]int
	for _, m := range f.Modalities {
		if seen[m.Name] {
			return fmt.Errorf("features: modality %q twice", m.Name)
		}
		seen[m.Name] = true
		n := len(m.Hashes)
		if len(m.Placeholders) != n {
			return fmt.Errorf("%s mm_hashes and mm_placeholders must have the same length", m.Name)
		}
		if f.KwargsData && len(m.Kwargs) != n {
			return fmt.Errorf("%s kwargs_data and mm_hashes must have the same length", m.Name)
		}
		if f.MetadataData && len(m.Metadata) != n {
			return fmt.Errorf("%s mm_metadata and mm_hashes must have the same length", m.Name)
		}
		for _, p := range m.Placeholders {
			if p.Offset < 0 {
				return fmt.Errorf("%s placeholder offset %d: must be greater than or equal to 0", m.Name, p.Offset)
			}
			if p.Length <= 0 {
				return fmt.Errorf("%s placeholder length %d: must be greater than 0", m.Name, p.Length)
			}
			if p.IsEmbed != nil && len(p.IsEmbed) != p.Length {
				return fmt.Errorf("is_embed must have the same length as the placeholder")
			}
			ranges = append(ranges, [2]int{p.Offset, p.Offset + p.Length})
		}
	}
	sortRanges(ranges)
	for i := 1; i < len(ranges); i++ {
		if ranges[i][0] < ranges[i-1][1] {
			return fmt.Errorf("mm_placeholders must be globally non-overlapping and sorted")
		}
	}
	if f.RequiresKV {
		if f.KVHandoff == nil {
			return fmt.Errorf("requires_kv requires kv_handoff compatibility information")
		}
		if len(f.Modalities) == 0 {
			return fmt.Errorf("requires_kv requires nonempty multimodal hashes")
		}
		for _, m := range f.Modalities {
			if len(m.Hashes) == 0 {
				return fmt.Errorf("requires_kv requires nonempty multimodal hashes")
			}
			for _, h := range m.Hashes {
				if h == "" {
					return fmt.Errorf("requires_kv requires nonempty multimodal hashes")
				}
			}
			for _, k := range m.Kwargs {
				if !k.IsNull() && f.KwargsData {
					return fmt.Errorf("requires_kv does not accept full kwargs_data")
				}
			}
		}
	}
	return nil
}

func sortRanges(r [][2]int) {
	slices.SortFunc(r, func(a, b [2]int) int {
		if c := cmp.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return cmp.Compare(a[1], b[1])
	})
}

// appendItem writes an item's base64, its pending pixel values spliced
// into body (nil: appended).
func appendItem(dst []byte, it ItemBytes, body *wire.Body) []byte {
	if st := it.stream; st != nil {
		if body != nil {
			return body.SpliceFrom(dst, st.encodedLen(), func(w io.Writer) error { return st.writeBase64(w, nil) })
		}
		if err := st.writeBase64(nil, &dst); err != nil {
			// Cannot happen: appending fails nowhere, and a source fails
			// only by its writer's error.
			panic("features: " + err.Error())
		}
		return dst
	}
	return appendBase64(dst, it.Raw)
}
