package features

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"

	asmbase64 "github.com/segmentio/asm/base64"

	"github.com/vrender/vrender/internal/wire"
)

// Tensor is a decoded tensor: torch dtype name, shape, raw little-endian
// bytes (aliasing the item's bytes).
type Tensor struct {
	DType string
	Shape []int64
	Data  []byte
}

// Slice is a Python slice; nil bounds are None.
type Slice struct{ Start, Stop, Step *int64 }

// Field is a decoded BaseMultiModalField: its factory ("flat", "batched",
// "shared") and the dataclass fields that factory takes.
type Field struct {
	Factory   string
	KeepOnCPU bool
	Slices    [][]Slice // flat: per item, one slice per dimension up to dim
	Dim       int64     // flat
	BatchSize int64     // shared
}

// Elem is MultiModalFieldElem. Data is a Tensor, an int64 or float64, a
// []any of those, or nil (the item is in the engine's cache).
type Elem struct {
	Data  any
	Field Field
}

// Item is MultiModalKwargsItem, fields in their encoded order.
type Item struct {
	Keys  []string
	Elems map[string]Elem
}

// dtypeSizes are the torch dtypes a tensor may name, with their item sizes.
var dtypeSizes = map[string]int{
	"bfloat16": 2, "float16": 2, "half": 2, "float32": 4, "float": 4, "float64": 8, "double": 8,
	"int8": 1, "uint8": 1, "int16": 2, "short": 2, "int32": 4, "int": 4, "int64": 8, "long": 8,
	"uint16": 2, "uint32": 4, "uint64": 8, "bool": 1,
}

// DecodeItem reads one kwargs item as vLLM's MsgpackDecoder does
// (_decode_mm_item), and is stricter where Python would accept nonsense:
// tensors must be inline (ext 3) with a known dtype and as many bytes as
// their shape needs, field arguments must have their declared types.
func DecodeItem(b []byte) (Item, error) {
	v, err := decodeMsgpack(b)
	if err != nil {
		return Item{}, err
	}
	if v.kind != mpMap {
		return Item{}, errors.New("kwargs item: not a map")
	}
	keys, err := v.keys()
	if err != nil {
		return Item{}, err
	}
	it := Item{Keys: keys, Elems: make(map[string]Elem, len(keys))}
	for _, k := range keys {
		ev, _ := v.get(k)
		e, err := decodeElem(ev)
		if err != nil {
			return Item{}, fmt.Errorf("kwargs item %q: %w", k, err)
		}
		it.Elems[k] = e
	}
	return it, nil
}

func decodeElem(v mpValue) (Elem, error) {
	if v.kind != mpMap {
		return Elem{}, errors.New("not a map")
	}
	keys, err := v.keys()
	if err != nil {
		return Elem{}, err
	}
	for _, k := range keys {
		if k != "data" && k != "field" {
			return Elem{}, fmt.Errorf("unexpected key %q", k)
		}
	}
	dv, ok1 := v.get("data")
	fv, ok2 := v.get("field")
	if !ok1 || !ok2 {
		return Elem{}, errors.New("needs data and field")
	}
	var e Elem
	if dv.kind != mpNil {
		if e.Data, err = decodeNested(dv, 0); err != nil {
			return Elem{}, err
		}
	}
	e.Field, err = decodeField(fv)
	return e, err
}

func decodeNested(v mpValue, depth int) (any, error) {
	switch v.kind {
	case mpInt:
		return v.i, nil
	case mpFloat:
		return v.f, nil
	case mpArray:
	default:
		return nil, errors.New("data: not a tensor, number or list")
	}
	if len(v.arr) > 0 && v.arr[0].kind == mpStr {
		return decodeTensor(v)
	}
	if depth > 16 {
		return nil, errors.New("data: nested too deeply")
	}
	out := make([]any, len(v.arr))
	for i, e := range v.arr {
		x, err := decodeNested(e, depth+1)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

func decodeTensor(v mpValue) (Tensor, error) {
	if len(v.arr) != 3 {
		return Tensor{}, errors.New("tensor: not (dtype, shape, data)")
	}
	t := Tensor{DType: string(v.arr[0].raw)}
	size, ok := dtypeSizes[t.DType]
	if !ok {
		return Tensor{}, fmt.Errorf("tensor: dtype %q", t.DType)
	}
	if v.arr[1].kind != mpArray {
		return Tensor{}, errors.New("tensor: shape is not a list")
	}
	numel := int64(1)
	for _, d := range v.arr[1].arr {
		if d.kind != mpInt || d.i < 0 {
			return Tensor{}, errors.New("tensor: shape holds a non-dimension")
		}
		t.Shape = append(t.Shape, d.i)
		if d.i != 0 && numel > (1<<62)/d.i {
			return Tensor{}, errors.New("tensor: shape too large")
		}
		numel *= d.i
	}
	data := v.arr[2]
	if data.kind != mpExt || data.ext != extRawView {
		return Tensor{}, errors.New("tensor: data is not inline (ext 3)")
	}
	if int64(len(data.raw)) != numel*int64(size) {
		return Tensor{}, fmt.Errorf("tensor: %d bytes for shape %v of %s", len(data.raw), t.Shape, t.DType)
	}
	t.Data = data.raw
	return t, nil
}

func decodeField(v mpValue) (Field, error) {
	if v.kind != mpArray || len(v.arr) != 2 || v.arr[0].kind != mpStr || v.arr[1].kind != mpMap {
		return Field{}, errors.New("field: not (factory, kwargs)")
	}
	f := Field{Factory: string(v.arr[0].raw)}
	kw := v.arr[1]
	keys, err := kw.keys()
	if err != nil {
		return Field{}, err
	}
	allowed := map[string][]string{"flat": {"keep_on_cpu", "slices", "dim"}, "batched": {"keep_on_cpu"},
		"shared": {"keep_on_cpu", "batch_size"}}[f.Factory]
	if allowed == nil {
		return Field{}, fmt.Errorf("field: factory %q", f.Factory)
	}
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			return Field{}, fmt.Errorf("field %s: unexpected argument %q", f.Factory, k)
		}
	}
	if x, ok := kw.get("keep_on_cpu"); ok {
		if x.kind != mpBool {
			return Field{}, errors.New("field: keep_on_cpu is not a bool")
		}
		f.KeepOnCPU = x.b
	}
	switch f.Factory {
	case "flat":
		if x, ok := kw.get("dim"); ok {
			if x.kind != mpInt {
				return Field{}, errors.New("field: dim is not an int")
			}
			f.Dim = x.i
		}
		x, ok := kw.get("slices")
		if !ok {
			return Field{}, errors.New("field flat: no slices")
		}
		if f.Slices, err = decodeSlices(x); err != nil {
			return Field{}, err
		}
	case "shared":
		x, ok := kw.get("batch_size")
		if !ok || x.kind != mpInt || x.i < 0 {
			return Field{}, errors.New("field shared: batch_size is not a count")
		}
		f.BatchSize = x.i
	}
	return f, nil
}

// decodeSlices reads a flat field's slices: a list, per item, of slice
// tuples (start, stop, step), or of single slices.
func decodeSlices(v mpValue) ([][]Slice, error) {
	if v.kind != mpArray {
		return nil, errors.New("field flat: slices is not a list")
	}
	out := make([][]Slice, len(v.arr))
	for i, e := range v.arr {
		if e.kind != mpArray {
			return nil, errors.New("field flat: a slice is not a list")
		}
		if len(e.arr) > 0 && e.arr[0].kind != mpArray {
			s, err := decodeSlice(e)
			if err != nil {
				return nil, err
			}
			out[i] = []Slice{s}
			continue
		}
		for _, se := range e.arr {
			s, err := decodeSlice(se)
			if err != nil {
				return nil, err
			}
			out[i] = append(out[i], s)
		}
	}
	return out, nil
}

func decodeSlice(v mpValue) (Slice, error) {
	if v.kind != mpArray || len(v.arr) != 3 {
		return Slice{}, errors.New("field flat: a slice is not (start, stop, step)")
	}
	var p [3]*int64
	for i, x := range v.arr {
		switch x.kind {
		case mpNil:
		case mpInt:
			n := x.i
			p[i] = &n
		default:
			return Slice{}, errors.New("field flat: a slice bound is not an int or None")
		}
	}
	return Slice{p[0], p[1], p[2]}, nil
}

// QwenImage reads a Qwen image item back, checking it as the generate
// route's field re-binding does for these models: pixel_values a floating
// (bfloat16, float16, float32) [t·h·w, cols] tensor in a flat field along dim 0, image_grid_thw an int64
// [3] tensor in a batched field kept on the CPU.
func (it Item) QwenImage(cols int) (QwenImage, error) {
	pv, ok1 := it.Elems["pixel_values"]
	g, ok2 := it.Elems["image_grid_thw"]
	if !ok1 || !ok2 || len(it.Elems) != 2 {
		return QwenImage{}, fmt.Errorf("image item: fields %v, want pixel_values and image_grid_thw", it.Keys)
	}
	gt, ok := g.Data.(Tensor)
	if !ok || gt.DType != "int64" || !slices.Equal(gt.Shape, []int64{3}) {
		return QwenImage{}, errors.New("image item: image_grid_thw is not an int64 [3] tensor")
	}
	if g.Field.Factory != "batched" || !g.Field.KeepOnCPU {
		return QwenImage{}, errors.New("image item: image_grid_thw's field is not batched, kept on the CPU")
	}
	var q QwenImage
	for i := range q.GridTHW {
		q.GridTHW[i] = int64(binary.LittleEndian.Uint64(gt.Data[8*i:]))
		if q.GridTHW[i] <= 0 || q.GridTHW[i] > 1<<20 {
			return QwenImage{}, fmt.Errorf("image item: grid_thw %v", q.GridTHW)
		}
	}
	pt, ok := pv.Data.(Tensor)
	if _, float := pixelDTypes[pt.DType]; !ok || !float || !slices.Equal(pt.Shape, []int64{q.Rows(), int64(cols)}) {
		return QwenImage{}, fmt.Errorf("image item: pixel_values is not a floating [%d, %d] tensor", q.Rows(), cols)
	}
	if pv.Field.Factory != "flat" || pv.Field.KeepOnCPU || pv.Field.Dim != 0 {
		return QwenImage{}, errors.New("image item: pixel_values's field is not flat along dim 0")
	}
	q.PixelValues = pt.Data
	if pt.DType != "bfloat16" {
		q.DType = pt.DType
	}
	return q, nil
}

// Decode reads a features object (the generate request's "features"
// member) with the pydantic rules of newer vLLM's feature_specs.py, whose
// strict ints and bools bf578e1's looser model also accepts: kwargs_data
// and mm_metadata entries are decoded from base64 into Kwargs and Metadata
// (not yet read as items: CheckPrompt does that).
func Decode(n *wire.Node) (Features, error) { return DecodeWith(n, DecodeBase64) }

// DecodeBase64 is an item's bytes from its base64 text: standard padded
// base64, CR and LF skipped (Go's decoder, which the fast one falls back to
// for whatever it does not decode itself).
func DecodeBase64(text string) ([]byte, error) { return asmbase64.StdEncoding.DecodeString(text) }

// DecodeWith is Decode with each kwargs_data and mm_metadata entry's bytes
// got from its base64 text by decode, which must answer as DecodeBase64
// does: an engine that keeps the items it decoded (the same text, the same
// bytes) passes one that looks them up first.
func DecodeWith(n *wire.Node, decode func(text string) ([]byte, error)) (Features, error) {
	var f Features
	if n.Kind != wire.Object {
		return f, errors.New("features: not an object")
	}
	hashes, ok := n.Get("mm_hashes")
	if !ok {
		return f, errors.New("features.mm_hashes: Field required")
	}
	places, ok := n.Get("mm_placeholders")
	if !ok {
		return f, errors.New("features.mm_placeholders: Field required")
	}
	if hashes.Kind != wire.Object || places.Kind != wire.Object {
		return f, errors.New("features: mm_hashes and mm_placeholders must be objects")
	}
	index := map[string]int{}
	for i, name := range hashes.Keys {
		list := hashes.Vals[i]
		if list.Kind != wire.Array {
			return f, fmt.Errorf("features.mm_hashes.%s: not a list", name)
		}
		m := Modality{Name: name, Hashes: make([]string, len(list.Arr))}
		for j, h := range list.Arr {
			if h.Kind != wire.String {
				return f, fmt.Errorf("features.mm_hashes.%s.%d: not a string", name, j)
			}
			m.Hashes[j] = h.S
		}
		index[name] = len(f.Modalities)
		f.Modalities = append(f.Modalities, m)
	}
	if len(places.Keys) != len(f.Modalities) {
		return f, errors.New("mm_hashes and mm_placeholders must use the same modalities")
	}
	for i, name := range places.Keys {
		mi, ok := index[name]
		if !ok {
			return f, errors.New("mm_hashes and mm_placeholders must use the same modalities")
		}
		ps, err := decodePlaceholders(name, places.Vals[i])
		if err != nil {
			return f, err
		}
		f.Modalities[mi].Placeholders = ps
	}
	var err error
	if f.KwargsData, err = decodeItems(n, "kwargs_data", index, f.Modalities, decode, func(m *Modality, b []ItemBytes) {
		m.Kwargs = b
	}); err != nil {
		return f, err
	}
	if f.MetadataData, err = decodeItems(n, "mm_metadata", index, f.Modalities, decode, func(m *Modality, b []ItemBytes) {
		m.Metadata = b
	}); err != nil {
		return f, err
	}
	_, f.MetadataMember = n.Get("mm_metadata")
	if v, ok := n.Get("requires_kv"); ok {
		if v.Kind != wire.Bool {
			return f, errors.New("features.requires_kv: Input should be a valid boolean")
		}
		f.RequiresKV = v.B
	}
	if v, ok := n.Get("kv_handoff"); ok && v.Kind != wire.Null {
		h, err := decodeHandoff(v)
		if err != nil {
			return f, err
		}
		f.KVHandoff = &h
	}
	return f, f.Validate()
}

func decodePlaceholders(name string, list *wire.Node) ([]Placeholder, error) {
	if list.Kind != wire.Array {
		return nil, fmt.Errorf("features.mm_placeholders.%s: not a list", name)
	}
	out := make([]Placeholder, len(list.Arr))
	for j, p := range list.Arr {
		at := "features.mm_placeholders." + name + "." + strconv.Itoa(j)
		if p.Kind != wire.Object {
			return nil, fmt.Errorf("%s: not an object", at)
		}
		var err error
		if out[j].Offset, err = strictInt(p, "offset", at); err != nil {
			return nil, err
		}
		if out[j].Length, err = strictInt(p, "length", at); err != nil {
			return nil, err
		}
		if e, ok := p.Get("is_embed"); ok && e.Kind != wire.Null {
			if e.Kind != wire.Array {
				return nil, fmt.Errorf("%s.is_embed: Input should be a valid list", at)
			}
			out[j].IsEmbed = make([]bool, len(e.Arr))
			for k, b := range e.Arr {
				if b.Kind != wire.Bool {
					return nil, fmt.Errorf("%s.is_embed.%d: Input should be a valid boolean", at, k)
				}
				out[j].IsEmbed[k] = b.B
			}
		}
	}
	return out, nil
}

// strictInt is pydantic's Field(strict=True) int: an integer literal only.
func strictInt(obj *wire.Node, key, at string) (int, error) {
	v, ok := obj.Get(key)
	if !ok {
		return 0, fmt.Errorf("%s.%s: Field required", at, key)
	}
	if v.Kind != wire.Number || v.IsFloat() {
		return 0, fmt.Errorf("%s.%s: Input should be a valid integer", at, key)
	}
	n, err := strconv.ParseInt(v.S, 10, 64)
	if err != nil || n > 1<<40 || n < -(1<<40) {
		return 0, fmt.Errorf("%s.%s: %s is out of range", at, key, v.S)
	}
	return int(n), nil
}

// decodeItems reads kwargs_data or mm_metadata: absent or null, or an
// object of lists of base64 strings (read by decode) or nulls.
func decodeItems(n *wire.Node, key string, index map[string]int, ms []Modality,
	decode func(string) ([]byte, error), set func(*Modality, []ItemBytes)) (bool, error) {
	v, ok := n.Get(key)
	if !ok || v.Kind == wire.Null {
		return false, nil
	}
	if v.Kind != wire.Object {
		return false, fmt.Errorf("features.%s: not an object", key)
	}
	if len(v.Keys) != len(ms) {
		return false, fmt.Errorf("%s must use the same modalities as mm_hashes", key)
	}
	for i, name := range v.Keys {
		mi, ok := index[name]
		if !ok {
			return false, fmt.Errorf("%s must use the same modalities as mm_hashes", key)
		}
		list := v.Vals[i]
		if list.Kind != wire.Array {
			return false, fmt.Errorf("features.%s.%s: not a list", key, name)
		}
		items := make([]ItemBytes, len(list.Arr))
		for j, e := range list.Arr {
			switch e.Kind {
			case wire.Null:
			case wire.String:
				b, err := decode(e.S)
				if err != nil {
					return false, fmt.Errorf("features.%s.%s.%d: not base64", key, name, j)
				}
				items[j] = RawItem(Blob{b})
			default:
				return false, fmt.Errorf("features.%s.%s.%d: not a string or null", key, name, j)
			}
		}
		set(&ms[mi], items)
	}
	return true, nil
}

func decodeHandoff(v *wire.Node) (KVHandoff, error) {
	var h KVHandoff
	if v.Kind != wire.Object {
		return h, errors.New("features.kv_handoff: not an object")
	}
	ver, ok := v.Get("version")
	if !ok || ver.Kind != wire.Number || ver.S != "1" {
		return h, errors.New("features.kv_handoff.version: Input should be 1")
	}
	fp, ok := v.Get("model_fingerprint")
	if !ok || fp.Kind != wire.String || fp.S == "" {
		return h, errors.New("features.kv_handoff.model_fingerprint: a nonempty string is required")
	}
	ps, ok := v.Get("position_state")
	if !ok || ps.Kind != wire.String || ps.S != "sequence" {
		return h, errors.New("features.kv_handoff.position_state: Input should be 'sequence'")
	}
	return KVHandoff{Version: 1, ModelFingerprint: fp.S, PositionState: ps.S}, nil
}

// CheckPrompt applies what the generate route checks against the prompt
// (engine_input_from_features): every placeholder inside the numTokens
// expanded token ids, every kwargs and metadata item decodable, and items
// present unless the request brings them another way (ecTransfer: it has
// ec_transfer_params; or requires_kv) — an engine without a cache of
// rendered items cannot resolve a null item.
func (f *Features) CheckPrompt(numTokens int, ecTransfer bool) error {
	for _, m := range f.Modalities {
		for _, p := range m.Placeholders {
			if p.Offset+p.Length > numTokens {
				return errors.New("mm_placeholders must remain within the token_ids sequence")
			}
		}
		for j := range m.Hashes {
			var item, meta []byte
			if j < len(m.Kwargs) {
				item = m.Kwargs[j].Bytes()
			}
			if j < len(m.Metadata) {
				meta = m.Metadata[j].Bytes()
			}
			if item == nil && !ecTransfer && !f.RequiresKV {
				return fmt.Errorf("%s item %d has no kwargs_data and the request has no ec_transfer_params", m.Name, j)
			}
			for _, b := range [][]byte{item, meta} {
				if b == nil {
					continue
				}
				if _, err := DecodeItem(b); err != nil {
					return fmt.Errorf("%s item %d: %w", m.Name, j, err)
				}
			}
		}
	}
	return nil
}

// QwenImages reads a checked prompt's image items, each matching its
// placeholder: length = t·h·w / merge² tokens.
func (f *Features) QwenImages(cols, merge int) ([]QwenImage, error) {
	for _, m := range f.Modalities {
		if m.Name != "image" {
			continue
		}
		out := make([]QwenImage, len(m.Hashes))
		for j := range m.Hashes {
			if j >= len(m.Kwargs) || m.Kwargs[j].IsNull() {
				return nil, fmt.Errorf("image item %d: no kwargs_data", j)
			}
			it, err := DecodeItem(m.Kwargs[j].Bytes())
			if err != nil {
				return nil, fmt.Errorf("image item %d: %w", j, err)
			}
			q, err := it.QwenImage(cols)
			if err != nil {
				return nil, fmt.Errorf("image item %d: %w", j, err)
			}
			if want := q.Rows() / int64(merge*merge); int64(m.Placeholders[j].Length) != want {
				return nil, fmt.Errorf("image item %d: placeholder of %d tokens, grid %v makes %d",
					j, m.Placeholders[j].Length, q.GridTHW, want)
			}
			out[j] = q
		}
		return out, nil
	}
	return nil, nil
}
