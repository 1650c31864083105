package features

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// A small msgpack reader for the kwargs items, which come from the
// network: lengths are checked against the bytes left before anything is
// allocated, and nesting is bounded.

type mpKind uint8

const (
	mpNil mpKind = iota
	mpBool
	mpInt // i holds it
	mpUint
	mpFloat
	mpStr
	mpBin
	mpExt
	mpArray
	mpMap
)

type mpValue struct {
	kind mpKind
	b    bool
	i    int64
	u    uint64
	f    float64
	raw  []byte // str, bin, ext payload (aliases the input)
	ext  int8
	arr  []mpValue // array elements; map keys and values alternate
}

// maxDepth bounds nesting; a kwargs item is a few levels deep.
const maxDepth = 64

var errTruncated = errors.New("msgpack: truncated")

type mpReader struct {
	b []byte
	p int
}

func (r *mpReader) take(n uint64) ([]byte, error) {
	if n > uint64(len(r.b)-r.p) {
		return nil, errTruncated
	}
	s := r.b[r.p : r.p+int(n)]
	r.p += int(n)
	return s, nil
}

func (r *mpReader) uint(size int) (uint64, error) {
	s, err := r.take(uint64(size))
	if err != nil {
		return 0, err
	}
	switch size {
	case 1:
		return uint64(s[0]), nil
	case 2:
		return uint64(binary.BigEndian.Uint16(s)), nil
	case 4:
		return uint64(binary.BigEndian.Uint32(s)), nil
	}
	return binary.BigEndian.Uint64(s), nil
}

func (r *mpReader) value(depth int) (mpValue, error) {
	if depth > maxDepth {
		return mpValue{}, errors.New("msgpack: nested too deeply")
	}
	hb, err := r.take(1)
	if err != nil {
		return mpValue{}, err
	}
	c := hb[0]
	switch {
	case c <= 0x7f:
		return mpValue{kind: mpInt, i: int64(c)}, nil
	case c >= 0xe0:
		return mpValue{kind: mpInt, i: int64(int8(c))}, nil
	case c&0xf0 == 0x80:
		return r.container(mpMap, uint64(c&0x0f), depth)
	case c&0xf0 == 0x90:
		return r.container(mpArray, uint64(c&0x0f), depth)
	case c&0xe0 == 0xa0:
		return r.bytes(mpStr, uint64(c&0x1f))
	}
	switch c {
	case 0xc0:
		return mpValue{kind: mpNil}, nil
	case 0xc2, 0xc3:
		return mpValue{kind: mpBool, b: c == 0xc3}, nil
	case 0xc4, 0xc5, 0xc6:
		n, err := r.uint(1 << (c - 0xc4))
		if err != nil {
			return mpValue{}, err
		}
		return r.bytes(mpBin, n)
	case 0xc7, 0xc8, 0xc9:
		n, err := r.uint(1 << (c - 0xc7))
		if err != nil {
			return mpValue{}, err
		}
		return r.extBody(n)
	case 0xca:
		u, err := r.uint(4)
		return mpValue{kind: mpFloat, f: float64(math.Float32frombits(uint32(u)))}, err
	case 0xcb:
		u, err := r.uint(8)
		return mpValue{kind: mpFloat, f: math.Float64frombits(u)}, err
	case 0xcc, 0xcd, 0xce, 0xcf:
		u, err := r.uint(1 << (c - 0xcc))
		if err != nil {
			return mpValue{}, err
		}
		if u <= math.MaxInt64 {
			return mpValue{kind: mpInt, i: int64(u)}, nil
		}
		return mpValue{kind: mpUint, u: u}, nil
	case 0xd0, 0xd1, 0xd2, 0xd3:
		size := 1 << (c - 0xd0)
		u, err := r.uint(size)
		if err != nil {
			return mpValue{}, err
		}
		shift := 64 - 8*size
		return mpValue{kind: mpInt, i: int64(u<<shift) >> shift}, nil
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8:
		return r.extBody(1 << (c - 0xd4))
	case 0xd9, 0xda, 0xdb:
		n, err := r.uint(1 << (c - 0xd9))
		if err != nil {
			return mpValue{}, err
		}
		return r.bytes(mpStr, n)
	case 0xdc, 0xdd:
		n, err := r.uint(2 << (c - 0xdc))
		if err != nil {
			return mpValue{}, err
		}
		return r.container(mpArray, n, depth)
	case 0xde, 0xdf:
		n, err := r.uint(2 << (c - 0xde))
		if err != nil {
			return mpValue{}, err
		}
		return r.container(mpMap, n, depth)
	}
	return mpValue{}, fmt.Errorf("msgpack: byte 0x%02x at %d", c, r.p-1)
}

func (r *mpReader) bytes(k mpKind, n uint64) (mpValue, error) {
	s, err := r.take(n)
	return mpValue{kind: k, raw: s}, err
}

func (r *mpReader) extBody(n uint64) (mpValue, error) {
	t, err := r.take(1)
	if err != nil {
		return mpValue{}, err
	}
	s, err := r.take(n)
	return mpValue{kind: mpExt, ext: int8(t[0]), raw: s}, err
}

func (r *mpReader) container(k mpKind, n uint64, depth int) (mpValue, error) {
	if k == mpMap {
		n *= 2
	}
	// Every element takes at least a byte.
	if n > uint64(len(r.b)-r.p) {
		return mpValue{}, errTruncated
	}
	v := mpValue{kind: k, arr: make([]mpValue, n)}
	for i := range v.arr {
		e, err := r.value(depth + 1)
		if err != nil {
			return mpValue{}, err
		}
		v.arr[i] = e
	}
	return v, nil
}

// decodeMsgpack reads one value filling b.
func decodeMsgpack(b []byte) (mpValue, error) {
	r := mpReader{b: b}
	v, err := r.value(0)
	if err != nil {
		return mpValue{}, err
	}
	if r.p != len(b) {
		return mpValue{}, errors.New("msgpack: trailing bytes")
	}
	return v, nil
}

// get is dict lookup with msgspec's last-key-wins for repeated keys.
func (v mpValue) get(key string) (mpValue, bool) {
	for i := len(v.arr) - 2; i >= 0; i -= 2 {
		if k := v.arr[i]; k.kind == mpStr && string(k.raw) == key {
			return v.arr[i+1], true
		}
	}
	return mpValue{}, false
}

// keys lists a map's keys once each, in first-seen order (a dict's order),
// or fails if one is not a string.
func (v mpValue) keys() ([]string, error) {
	var ks []string
	seen := map[string]bool{}
	for i := 0; i < len(v.arr); i += 2 {
		if v.arr[i].kind != mpStr {
			return nil, errors.New("msgpack: a map key is not a string")
		}
		k := string(v.arr[i].raw)
		if !seen[k] {
			seen[k] = true
			ks = append(ks, k)
		}
	}
	return ks, nil
}
