package kvevents

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// MaxDepth bounds how deep a payload's msgpack values nest. A batch
// nests six deep at most (the batch, its events, an event, extra_keys, a
// block's keys, a key's tuple); the msgpack library recurses once per
// level in Skip and DecodeInterface, so an unbounded depth is a stack
// overflow, a fatal error no recover catches.
const MaxDepth = 32

// MaxElements bounds the values one payload holds, containers and
// scalars together. Decoded, a value costs up to 40 bytes (a Hash) for
// one byte on the wire; the bound keeps a hostile 64 MiB batch of
// one-byte values near 80 MB decoded instead of 2.5 GB, and still holds a
// single step that stores a million-token prompt (tokens plus hashes).
const MaxElements = 1 << 21

var errHeaderShort = errors.New("msgpack header cut short")

var errTooDeep = fmt.Errorf("msgpack values nested more than %d deep", MaxDepth)

// scanValue walks the one msgpack value at the start of data without
// decoding it, with an explicit stack of the elements each open container
// still holds, and returns where it ends. It checks what the decoder
// cannot check before it recurses or allocates: that the value is whole,
// nests at most MaxDepth deep and holds at most MaxElements values.
func scanValue(data []byte) (int, error) {
	var stack [MaxDepth + 1]uint64 // elements left in each open container
	depth, elems := 0, 0
	stack[0] = 1 // the value itself
	i := 0
	for {
		for stack[depth] == 0 {
			if depth == 0 {
				return i, nil
			}
			depth--
		}
		stack[depth]--
		if elems++; elems > MaxElements {
			return i, fmt.Errorf("more than %d msgpack values", MaxElements)
		}
		if i >= len(data) {
			return i, errors.New("msgpack value cut short")
		}
		// Most of a batch is integers (token ids, hashes): their length is
		// their code's.
		if l := scalarLen[data[i]]; l != 0 {
			if i += int(l); i > len(data) {
				return len(data), errors.New("msgpack value cut short")
			}
			continue
		}
		skip, n, err := header(data[i:])
		if err != nil {
			return i, err
		}
		if skip > uint64(len(data)-i) {
			return i, errors.New("msgpack value cut short")
		}
		i += int(skip)
		if n == 0 {
			continue
		}
		// Every element takes at least a byte: a count past the bytes
		// left is a lie, caught before any decoder allocates for it.
		if n > uint64(len(data)-i) {
			return i, fmt.Errorf("msgpack container of %d elements in %d bytes", n, len(data)-i)
		}
		if depth++; depth > MaxDepth {
			return i, errTooDeep
		}
		stack[depth] = n
	}
}

// scalarLen is the whole length of each msgpack code that fixes it
// (integers, floats, nil, booleans, fixext), 0 for the others.
var scalarLen = func() (t [256]uint8) {
	for c := range 256 {
		if c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3 || c >= 0xca && c <= 0xd8 {
			skip, _, _ := header([]byte{byte(c)})
			t[c] = uint8(skip)
		}
	}
	return t
}()

// header reads the msgpack header at the start of b (b is not empty): the
// bytes to skip to the next value (the header and, for a string, binary
// or extension, its body) and, for a container, the elements it holds
// (a map's keys and values both count).
func header(b []byte) (skip, elems uint64, err error) {
	c := b[0]
	switch {
	case c <= 0x7f || c >= 0xe0: // fixint
		return 1, 0, nil
	case c <= 0x8f: // fixmap
		return 1, 2 * uint64(c&0x0f), nil
	case c <= 0x9f: // fixarray
		return 1, uint64(c & 0x0f), nil
	case c <= 0xbf: // fixstr
		return 1 + uint64(c&0x1f), 0, nil
	}
	// size reads the big-endian length of k bytes after the code.
	size := func(k int) (uint64, bool) {
		if len(b) < 1+k {
			return 0, false
		}
		switch k {
		case 1:
			return uint64(b[1]), true
		case 2:
			return uint64(binary.BigEndian.Uint16(b[1:])), true
		default:
			return uint64(binary.BigEndian.Uint32(b[1:])), true
		}
	}
	// body is a string, binary or extension: the code, a k-byte length,
	// extra bytes (an extension's type) and the data.
	body := func(k int, extra uint64) (uint64, uint64, error) {
		n, ok := size(k)
		if !ok {
			return 0, 0, errHeaderShort
		}
		return 1 + uint64(k) + extra + n, 0, nil
	}
	switch c {
	case 0xc0, 0xc2, 0xc3: // nil, false, true
		return 1, 0, nil
	case 0xcc, 0xd0:
		return 2, 0, nil
	case 0xcd, 0xd1:
		return 3, 0, nil
	case 0xca, 0xce, 0xd2:
		return 5, 0, nil
	case 0xcb, 0xcf, 0xd3:
		return 9, 0, nil
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16: code, type, data
		return 2 + 1<<(c-0xd4), 0, nil
	case 0xc4, 0xd9: // bin 8, str 8
		return body(1, 0)
	case 0xc5, 0xda:
		return body(2, 0)
	case 0xc6, 0xdb:
		return body(4, 0)
	case 0xc7, 0xc8, 0xc9: // ext 8, 16, 32
		return body(1<<(c-0xc7), 1)
	case 0xdc, 0xdd, 0xde, 0xdf: // array 16, 32; map 16, 32
		k := 2 << ((c - 0xdc) & 1)
		n, ok := size(k)
		if !ok {
			return 0, 0, errHeaderShort
		}
		if c >= 0xde {
			n *= 2
		}
		return 1 + uint64(k), n, nil
	}
	return 0, 0, fmt.Errorf("msgpack code 0x%x is never used", c)
}
