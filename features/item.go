package features

import (
	"encoding/binary"
	"fmt"
)

// extRawView is serial_utils.CUSTOM_TYPE_RAW_VIEW: a tensor's raw bytes
// inline (the render server's encoder has size_threshold=2**62, so every
// tensor is inline).
const extRawView = 3

// QwenImage is one image's output of the Qwen2-VL image processor (Qwen2-VL,
// Qwen2.5-VL, Qwen3-VL) after vLLM's cast to the model dtype.
type QwenImage struct {
	// GridTHW is image_grid_thw: patches along time, height and width.
	GridTHW [3]int64
	// PixelValues is the little-endian row-major tensor [t·h·w, cols]
	// (vision's output) in DType.
	PixelValues []byte
	// DType is the torch dtype vLLM cast pixel_values to, the model's
	// dtype: "" means "bfloat16"; "float16" and "float32" are the others.
	DType string
	// Pending, when set, are the pixel values made as the item is
	// written, in place of PixelValues.
	Pending *PendingPixels
}

// pixelBytes is the length of img's pixel values, made or pending.
func (q QwenImage) pixelBytes() int {
	if q.Pending != nil {
		return q.Pending.Len
	}
	return len(q.PixelValues)
}

func (q QwenImage) dtype() string {
	if q.DType == "" {
		return "bfloat16"
	}
	return q.DType
}

// Rows is the number of pixel_values rows, t·h·w.
func (q QwenImage) Rows() int64 { return q.GridTHW[0] * q.GridTHW[1] * q.GridTHW[2] }

// QwenItems encodes the kwargs items of the images one processor call made
// (a request's images, in prompt order), as vLLM's MsgpackEncoder encodes
// MultiModalKwargsItem (serial_utils._encode_mm_item). cols is the row
// width, 3·2·P² (1176 for patch 14, 1536 for patch 16). Each item is three
// pieces: the msgpack before the pixel values, the pixel values themselves
// (img.PixelValues, shared, not copied), and the rest; or, for an image
// with Pending, the three encoded as the item is written.
//
// Each item is a map of two fields, from _create_qwen2vl_field_factory:
// pixel_values, flat_from_sizes("image", grid.prod(-1)) — its field lists
// the row slices of every image of the call — and image_grid_thw,
// batched("image", keep_on_cpu=True). vLLM builds the item from a set of
// keys, so its key order varies with Python's string hashing from process
// to process; this writes pixel_values first, and readers accept any order.
func QwenItems(images []QwenImage, cols int) ([]ItemBytes, error) {
	slices, err := qwenSlices(images, cols)
	if err != nil {
		return nil, err
	}
	out := make([]ItemBytes, len(images))
	for i, img := range images {
		tail := make([]byte, 0, len(slices)+192)
		tail = appendFlatField(tail, slices)
		tail = appendStr(tail, "image_grid_thw")
		tail = appendGridTHW(tail, img)
		if img.Pending != nil {
			out[i] = ItemBytes{stream: &itemStream{head: qwenItemHead(img, cols), tail: tail, px: img.Pending, cols: cols}}
			continue
		}
		out[i] = RawItem(Blob{qwenItemHead(img, cols), img.PixelValues, tail})
	}
	return out, nil
}

// qwenItemHead is an item's msgpack up to its pixel values.
func qwenItemHead(img QwenImage, cols int) []byte {
	head := appendMapHeader(make([]byte, 0, 64), 2)
	head = appendStr(head, "pixel_values")
	return appendPixelValuesHead(head, img, cols)
}

// QwenMetadata encodes an image's metadata item (newer vLLM's mm_metadata,
// feature_utils._encode_metadata_items): the fields kept on the CPU, which
// for Qwen images is image_grid_thw alone.
func QwenMetadata(img QwenImage) []byte {
	b := appendMapHeader(make([]byte, 0, 96), 1)
	b = appendStr(b, "image_grid_thw")
	return appendGridTHW(b, img)
}

// pixelDTypes are the model dtypes pixel_values may be cast to.
var pixelDTypes = map[string]int{"bfloat16": 2, "float16": 2, "float32": 4}

// qwenSlices checks the images and writes the flat field's slices list
// once for all items: [(slice(start, stop),), …] from flat_from_sizes with
// dim 0, each slice as enc_hook's (start, stop, None) tuple.
func qwenSlices(images []QwenImage, cols int) ([]byte, error) {
	if cols <= 0 {
		return nil, fmt.Errorf("features: pixel_values row width %d", cols)
	}
	rows := make([]int64, len(images))
	for i, img := range images {
		for _, n := range img.GridTHW {
			if n <= 0 {
				return nil, fmt.Errorf("features: image %d: grid_thw %v", i, img.GridTHW)
			}
		}
		rows[i] = img.Rows()
		size, ok := pixelDTypes[img.dtype()]
		if !ok {
			return nil, fmt.Errorf("features: image %d: pixel_values dtype %q", i, img.DType)
		}
		if want := rows[i] * int64(cols) * int64(size); int64(img.pixelBytes()) != want {
			return nil, fmt.Errorf("features: image %d: %d bytes of pixel_values, want %d for %d rows of %d %s",
				i, img.pixelBytes(), want, rows[i], cols, img.dtype())
		}
	}
	return appendSlices(nil, rows), nil
}

// appendPixelValuesHead writes the pixel_values element up to its tensor's
// bytes, which follow it; appendPixelValuesField writes the rest.
func appendPixelValuesHead(b []byte, img QwenImage, cols int) []byte {
	b = appendMapHeader(b, 2)
	b = appendStr(b, "data")
	b = appendArrayHeader(b, 3)
	b = appendStr(b, img.dtype())
	b = appendArrayHeader(b, 2)
	b = appendInt(b, img.Rows())
	b = appendInt(b, int64(cols))
	return appendExtHeader(b, extRawView, img.pixelBytes())
}

func appendGridTHW(b []byte, img QwenImage) []byte {
	b = appendMapHeader(b, 2)
	b = appendStr(b, "data")
	b = appendArrayHeader(b, 3)
	b = appendStr(b, "int64")
	b = appendArrayHeader(b, 1)
	b = appendInt(b, 3)
	b = appendExtHeader(b, extRawView, 24)
	for _, n := range img.GridTHW {
		b = binary.LittleEndian.AppendUint64(b, uint64(n))
	}
	return appendBatchedCPUField(b)
}
