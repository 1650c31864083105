package vision

import (
	"fmt"
	"math"
)

// DType is the element type vLLM casts floating processor outputs to: the model's dtype
// (multimodal/processing/context.py _postprocess_output).
type DType uint8

const (
	BFloat16 DType = iota + 1
	Float16
	Float32
)

// String is torch's name without "torch.", the spelling the features encoding uses.
func (d DType) String() string {
	switch d {
	case BFloat16:
		return "bfloat16"
	case Float16:
		return "float16"
	case Float32:
		return "float32"
	}
	return fmt.Sprintf("vision.DType(%d)", uint8(d))
}

// Size is the number of bytes one element takes.
func (d DType) Size() int {
	if d == Float32 {
		return 4
	}
	return 2
}

// ParseDType reads a torch dtype name as a model config or --dtype spells it.
func ParseDType(s string) (DType, error) {
	switch s {
	case "bfloat16":
		return BFloat16, nil
	case "float16", "half":
		return Float16, nil
	case "float32", "float":
		return Float32, nil
	}
	return 0, fmt.Errorf("vision: unsupported dtype %q (want bfloat16, float16 or float32)", s)
}

// bits returns f in d's encoding, rounded to nearest even as torch's .to(dtype) rounds.
func (d DType) bits(f float32) uint32 {
	switch d {
	case BFloat16:
		return uint32(bf16Bits(f))
	case Float16:
		return uint32(f16Bits(f))
	}
	return math.Float32bits(f)
}

// bf16Bits keeps the top 16 bits of f, rounding the rest to nearest even (c10::round_to_nearest_even).
func bf16Bits(f float32) uint16 {
	u := math.Float32bits(f)
	if f != f {
		return 0x7fc0
	}
	return uint16((u + 0x7fff + (u>>16)&1) >> 16)
}

// f16Bits is IEEE half precision with round to nearest even, subnormals and overflow to infinity.
func f16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff {
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		if e < -10 {
			return sign
		}
		man |= 0x800000
		shift := uint(14 - e)
		h := man >> shift
		rem, half := man&(1<<shift-1), uint32(1)<<(shift-1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // a carry into the exponent is the correct rounding, up to infinity
	}
	return sign | uint16(h)
}
