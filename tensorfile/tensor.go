package tensorfile

import (
	"bytes"
	"fmt"
	"math/bits"
)

// DType is a tensor's element type, as torch names it.
type DType uint8

const (
	Bool DType = iota + 1
	UInt8
	Int8
	Int16
	Int32
	Int64
	UInt16
	UInt32
	UInt64
	Float16
	BFloat16
	Float32
	Float64
	Complex64
	Complex128
)

var dtypeInfo = [...]struct {
	name  string // str(torch.dtype) without "torch."
	numpy string // numpy's dtype.str on a little-endian host; "" for bfloat16
	size  int
}{
	Bool:       {"bool", "|b1", 1},
	UInt8:      {"uint8", "|u1", 1},
	Int8:       {"int8", "|i1", 1},
	Int16:      {"int16", "<i2", 2},
	Int32:      {"int32", "<i4", 4},
	Int64:      {"int64", "<i8", 8},
	UInt16:     {"uint16", "<u2", 2},
	UInt32:     {"uint32", "<u4", 4},
	UInt64:     {"uint64", "<u8", 8},
	Float16:    {"float16", "<f2", 2},
	BFloat16:   {"bfloat16", "", 2},
	Float32:    {"float32", "<f4", 4},
	Float64:    {"float64", "<f8", 8},
	Complex64:  {"complex64", "<c8", 8},
	Complex128: {"complex128", "<c16", 16},
}

// String is the dtype's torch name without "torch." ("float32"), as
// vLLM's msgpack encoder writes it.
func (d DType) String() string {
	if d == 0 || int(d) >= len(dtypeInfo) {
		return fmt.Sprintf("DType(%d)", d)
	}
	return dtypeInfo[d].name
}

// Size is the bytes of one element.
func (d DType) Size() int { return dtypeInfo[d].size }

// NumpyStr is numpy's dtype.str for the dtype ("<f4"), which vLLM's hasher
// writes for every tensor but bfloat16 (which numpy lacks: "").
func (d DType) NumpyStr() string { return dtypeInfo[d].numpy }

// IsInteger reports an integer dtype (bool is not).
func (d DType) IsInteger() bool { return d >= UInt8 && d <= UInt64 }

// Tensor is a dense tensor: little-endian elements in C (row-major) order.
type Tensor struct {
	DType DType
	Shape []int
	Data  []byte
}

// NumElements is the product of the shape (1 for a scalar).
func (t Tensor) NumElements() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Error is a payload Load refuses, with the message vLLM's loader gives
// for it where it has one. vLLM answers the ValueError and TypeError of
// numpy and torch.from_numpy with 400; torch.load's own failures
// (UnpicklingError, RuntimeError) reach its clients as 500, which vrender
// answers 400 as well: the payload is the client's.
type Error struct {
	Message string
}

func (e *Error) Error() string { return e.Message }

func errorf(format string, a ...any) *Error { return &Error{Message: fmt.Sprintf(format, a...)} }

// maxTensorBytes is the largest tensor Load reads whatever the caller's cap.
const maxTensorBytes = 1 << 31

// npyMagic is numpy's MAGIC_PREFIX, which vLLM checks first.
var npyMagic = []byte("\x93NUMPY")

// Load reads one image_embeds payload (the base64-decoded bytes): a .npy
// file when it starts with numpy's magic, else a torch.save archive.
// maxBytes caps the tensor's dense size.
func Load(data []byte, maxBytes int64) (Tensor, error) {
	// Offsets into a view stay far from int overflow below 2 GiB.
	maxBytes = min(maxBytes, maxTensorBytes)
	if bytes.HasPrefix(data, npyMagic) {
		return loadNpy(data, maxBytes)
	}
	return loadTorch(data, maxBytes)
}

// denseBytes is numel·size of shape, or an error when a dimension is
// negative or the product overflows or passes maxBytes.
func denseBytes(shape []int, size int, maxBytes int64) (int, error) {
	total := uint64(size)
	for _, d := range shape {
		if d < 0 {
			return 0, errorf("negative dimension %d in shape %s", d, ShapeRepr(shape))
		}
		hi, lo := bits.Mul64(total, uint64(d))
		if hi != 0 || lo > uint64(maxBytes) {
			return 0, errorf("a tensor of shape %s and %d-byte elements is larger than the %d-byte limit", ShapeRepr(shape), size, maxBytes)
		}
		total = lo
	}
	if total > uint64(maxBytes) {
		return 0, errorf("a tensor of shape %s and %d-byte elements is larger than the %d-byte limit", ShapeRepr(shape), size, maxBytes)
	}
	return int(total), nil
}

// ShapeRepr is Python's repr of a tensor's shape tuple: (2, 3), (4,), ().
func ShapeRepr(shape []int) string {
	var b []byte
	b = append(b, '(')
	for i, d := range shape {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = fmt.Appendf(b, "%d", d)
	}
	if len(shape) == 1 {
		b = append(b, ',')
	}
	return string(append(b, ')'))
}
