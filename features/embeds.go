package features

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/tensorfile"
)

// QwenEmbeds is one image_embeds content part for a Qwen2-VL-family model,
// as the model's data parser takes it (Qwen2VLMultiModalDataParser:
// DictEmbeddingItems with required fields image_embeds and image_grid_thw):
// the tensors as the client sent them, no cast to the model dtype (vLLM
// passes embeddings through the processor untouched).
type QwenEmbeds struct {
	// Embeds is image_embeds: [tokens, hidden].
	Embeds tensorfile.Tensor
	// GridTHW is image_grid_thw: an integer [3] tensor.
	GridTHW tensorfile.Tensor
}

// EmbedsItem is what the render step knows of one image_embeds part for
// its features.
type EmbedsItem struct {
	Hash        string
	Placeholder Placeholder
	Embeds      QwenEmbeds
}

// QwenEmbedsItems encodes the kwargs items of a request's image_embeds
// parts, as vLLM's MsgpackEncoder encodes the MultiModalKwargsItems
// DictEmbeddingItems builds from _create_qwen2vl_field_factory: image_embeds
// in flat_from_sizes("image", grid.prod(-1) // merge²) — its field lists
// every part's row slice, as pixel_values' does — and image_grid_thw
// batched, kept on the CPU. Like QwenItems, image_embeds is written first
// (vLLM's order follows a set's).
func QwenEmbedsItems(items []QwenEmbeds) ([]ItemBytes, error) {
	rows := make([]int64, len(items))
	for i, it := range items {
		if len(it.Embeds.Shape) != 2 || len(it.GridTHW.Shape) != 1 || it.GridTHW.Shape[0] != 3 {
			return nil, fmt.Errorf("features: image_embeds item %d: shapes %v and %v, want [tokens, hidden] and [3]",
				i, it.Embeds.Shape, it.GridTHW.Shape)
		}
		rows[i] = int64(it.Embeds.Shape[0])
	}
	slices := appendSlices(nil, rows)
	out := make([]ItemBytes, len(items))
	for i, it := range items {
		// The embeddings' bytes stay where the loader put them (a Blob
		// piece), as pixel_values' do.
		head := appendMapHeader(make([]byte, 0, 64), 2)
		head = appendStr(head, "image_embeds")
		head = appendMapHeader(head, 2)
		head = appendStr(head, "data")
		head = appendTensorHead(head, it.Embeds)
		tail := appendFlatField(make([]byte, 0, len(slices)+128), slices)
		tail = appendStr(tail, "image_grid_thw")
		tail = appendEmbedsGrid(tail, it.GridTHW)
		out[i] = RawItem(Blob{head, it.Embeds.Data, tail})
	}
	return out, nil
}

// QwenEmbedsMetadata is an image_embeds item's metadata item (newer vLLM's
// mm_metadata): image_grid_thw, the field kept on the CPU.
func QwenEmbedsMetadata(it QwenEmbeds) []byte {
	b := appendMapHeader(make([]byte, 0, 96), 1)
	b = appendStr(b, "image_grid_thw")
	return appendEmbedsGrid(b, it.GridTHW)
}

func appendEmbedsGrid(b []byte, g tensorfile.Tensor) []byte {
	b = appendMapHeader(b, 2)
	b = appendStr(b, "data")
	b = appendTensor(b, g)
	return appendBatchedCPUField(b)
}

// appendBatchedCPUField writes batched(keep_on_cpu=True): the field of
// image_grid_thw.
func appendBatchedCPUField(b []byte) []byte {
	b = appendStr(b, "field")
	b = appendArrayHeader(b, 2)
	b = appendStr(b, "batched")
	b = appendMapHeader(b, 1)
	b = appendStr(b, "keep_on_cpu")
	return appendBool(b, true)
}

// appendTensor writes serial_utils' tensor encoding: [dtype, shape, raw
// view as ext 3].
func appendTensor(b []byte, t tensorfile.Tensor) []byte {
	return append(appendTensorHead(b, t), t.Data...)
}

// appendTensorHead writes a tensor's encoding up to its bytes, which follow.
func appendTensorHead(b []byte, t tensorfile.Tensor) []byte {
	b = appendArrayHeader(b, 3)
	b = appendStr(b, t.DType.String())
	b = appendArrayHeader(b, len(t.Shape))
	for _, d := range t.Shape {
		b = appendInt(b, int64(d))
	}
	return appendExtHeader(b, extRawView, len(t.Data))
}

// appendFlatField writes a flat field along dim 0 with the given slices
// list (appendSlices).
func appendFlatField(b, slices []byte) []byte {
	b = appendStr(b, "field")
	b = appendArrayHeader(b, 2)
	b = appendStr(b, "flat")
	// dataclasses.fields order: the base class's keep_on_cpu, then slices, dim.
	b = appendMapHeader(b, 3)
	b = appendStr(b, "keep_on_cpu")
	b = appendBool(b, false)
	b = appendStr(b, "slices")
	b = append(b, slices...)
	b = appendStr(b, "dim")
	return appendInt(b, 0)
}

// appendSlices writes flat_from_sizes' slices for items of the given row
// counts: [(slice(start, stop),), …], each slice as enc_hook's (start,
// stop, None).
func appendSlices(b []byte, rows []int64) []byte {
	b = appendArrayHeader(b, len(rows))
	var start int64
	for _, n := range rows {
		b = appendArrayHeader(b, 1)
		b = appendArrayHeader(b, 3)
		b = appendInt(b, start)
		b = appendInt(b, start+n)
		b = appendNil(b)
		start += n
	}
	return b
}

// QwenEmbedsFeatures builds the features of a prompt's image_embeds parts.
func QwenEmbedsFeatures(items []EmbedsItem, opts Options) (Features, error) {
	return newImageFeatures(len(items),
		func(i int) (string, Placeholder) { return items[i].Hash, items[i].Placeholder },
		func() ([]ItemBytes, error) {
			embeds := make([]QwenEmbeds, len(items))
			for i, it := range items {
				embeds[i] = it.Embeds
			}
			return QwenEmbedsItems(embeds)
		},
		func(i int) []byte { return QwenEmbedsMetadata(items[i].Embeds) }, opts)
}

// EmbedsHash is one image_embeds part's mm_hash, as ImageHash's rules give
// it with the item vLLM hashes for a DictEmbeddingItems entry: the dict
// {image_embeds, image_grid_thw} of its tensors. vLLM iterates that dict in
// the order of a Python set of the two names, which changes with the
// process's string-hash seed, so vLLM itself gives one of two hashes from
// run to run; this hashes image_embeds first.
func (h Hasher) EmbedsHash(it QwenEmbeds, uuid *string, processorKwargs *wire.Node) (string, error) {
	return h.hashItem(&stream{h: h.Algorithm.new()}, uuid, processorKwargs, func(s *stream) {
		s.tensor("image.image_embeds", it.Embeds)
		s.tensor("image.image_grid_thw", it.GridTHW)
	})
}

// tensor is iter_item_to_bytes(key, tensor): the key, then serialize_item's
// bytes — numpy's view of the tensor (dtype.str, shape, data), or for
// bfloat16, which numpy lacks, the original dtype and shape and the bytes
// as a uint8 array.
func (s *stream) tensor(key string, t tensorfile.Tensor) {
	s.key(key)
	if t.DType == tensorfile.BFloat16 {
		s.leaf("tensor.original_dtype", []byte("torch.bfloat16"))
		for i, d := range t.Shape {
			s.leaf("tensor.original_shape."+strconv.Itoa(i), binary.LittleEndian.AppendUint64(s.num[:0], uint64(d)))
		}
		s.key("tensor.data")
		s.ndarray("|u1", []int{len(t.Data)}, t.Data)
		return
	}
	s.key("tensor")
	s.ndarray(t.DType.NumpyStr(), t.Shape, t.Data)
}

// ndarray is serialize_item of an array of one or more dimensions:
// iter_item_to_bytes("ndarray", {"dtype", "shape", "data"}).
func (s *stream) ndarray(dtype string, shape []int, data []byte) {
	s.leaf("ndarray.dtype", []byte(dtype))
	for i, d := range shape {
		s.leaf("ndarray.shape."+strconv.Itoa(i), binary.LittleEndian.AppendUint64(s.num[:0], uint64(d)))
	}
	s.leaf("ndarray.data", data)
}
