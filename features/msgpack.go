package features

import (
	"encoding/binary"
	"math"
)

// Append-style msgpack writers with msgspec's choices: the smallest int
// form, str8 for strings of 32 to 255 bytes, fixext where the length
// allows, float64 always.

func appendMapHeader(dst []byte, n int) []byte { return appendHeader(dst, n, 0x80, 0xde) }

func appendArrayHeader(dst []byte, n int) []byte { return appendHeader(dst, n, 0x90, 0xdc) }

// appendHeader writes a map or array header: the fix form below 16, then
// the 16-bit form (code16) and the 32-bit one (code16+1).
func appendHeader(dst []byte, n int, fix, code16 byte) []byte {
	switch {
	case n < 16:
		return append(dst, fix|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, code16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(dst, code16+1), uint32(n))
}

func appendStr(dst []byte, s string) []byte {
	switch n := len(s); {
	case n < 32:
		dst = append(dst, 0xa0|byte(n))
	case n <= math.MaxUint8:
		dst = append(dst, 0xd9, byte(n))
	case n <= math.MaxUint16:
		dst = binary.BigEndian.AppendUint16(append(dst, 0xda), uint16(n))
	default:
		dst = binary.BigEndian.AppendUint32(append(dst, 0xdb), uint32(n))
	}
	return append(dst, s...)
}

func appendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, 0xc3)
	}
	return append(dst, 0xc2)
}

func appendNil(dst []byte) []byte { return append(dst, 0xc0) }

func appendInt(dst []byte, v int64) []byte {
	switch {
	case v >= 0 && v < 128:
		return append(dst, byte(v))
	case v >= -32 && v < 0:
		return append(dst, byte(v))
	case v >= 0 && v <= math.MaxUint8:
		return append(dst, 0xcc, byte(v))
	case v >= 0 && v <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, 0xcd), uint16(v))
	case v >= 0 && v <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(dst, 0xce), uint32(v))
	case v >= 0:
		return binary.BigEndian.AppendUint64(append(dst, 0xcf), uint64(v))
	case v >= math.MinInt8:
		return append(dst, 0xd0, byte(v))
	case v >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(dst, 0xd1), uint16(v))
	case v >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(dst, 0xd2), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(dst, 0xd3), uint64(v))
}

// appendExtHeader writes the header of an ext value of n bytes; the caller
// appends the bytes.
func appendExtHeader(dst []byte, typ int8, n int) []byte {
	switch n {
	case 1:
		return append(dst, 0xd4, byte(typ))
	case 2:
		return append(dst, 0xd5, byte(typ))
	case 4:
		return append(dst, 0xd6, byte(typ))
	case 8:
		return append(dst, 0xd7, byte(typ))
	case 16:
		return append(dst, 0xd8, byte(typ))
	}
	switch {
	case n <= math.MaxUint8:
		dst = append(dst, 0xc7, byte(n))
	case n <= math.MaxUint16:
		dst = binary.BigEndian.AppendUint16(append(dst, 0xc8), uint16(n))
	default:
		dst = binary.BigEndian.AppendUint32(append(dst, 0xc9), uint32(n))
	}
	return append(dst, byte(typ))
}
