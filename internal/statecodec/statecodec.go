// Package statecodec is the compact binary form of resumable state (parser
// machines, detokenizer windows, checkpoints): varints for integers,
// length-prefixed strings and byte slices, nil and empty kept apart for
// slices and maps, no type descriptors. A Codec runs one way, encoding or
// decoding, and each state type has one method that walks its fields
// through it, so the two directions cannot drift apart. Decoding is for
// untrusted bytes: every length is bounded by what is left, a bad value is
// a sticky error, and nothing panics.
package statecodec

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// MaxLen bounds any length read, so hostile input cannot make a decoder
// allocate without limit.
const MaxLen = 1 << 24

// ErrShort is wrapped by the error for input that ends early.
var ErrShort = errors.New("state truncated")

// Codec encodes the values it is shown (NewEncoder) or overwrites them
// with decoded ones (NewDecoder). After an error a decoder reads zeros.
type Codec struct {
	dec bool
	buf []byte // encoded so far, or what is left to decode
	err error
	// settled: what is decoded next is only read, never continued (a
	// finished stream), so its offsets need not fit its buffers.
	settled bool
}

// SetSettled says whether the state decoded next is only read, never
// continued.
func (c *Codec) SetSettled(settled bool) { c.settled = settled }

// Within records an error, when decoding state that will be continued,
// unless every v is in [0, hi]: offsets into a buffer the state holds,
// checked once it is decoded.
func (c *Codec) Within(hi int, v ...int) {
	if !c.dec || c.settled {
		return
	}
	for _, x := range v {
		if x < 0 || x > hi {
			c.Failf("state offset %d outside [0, %d]", x, hi)
			return
		}
	}
}

// NewEncoder returns an encoder appending to buf.
func NewEncoder(buf []byte) *Codec { return &Codec{buf: buf} }

// NewDecoder returns a decoder reading data.
func NewDecoder(data []byte) *Codec { return &Codec{dec: true, buf: data} }

// Decoding reports whether c decodes.
func (c *Codec) Decoding() bool { return c.dec }

// Bytes is what an encoder wrote.
func (c *Codec) Bytes() []byte { return c.buf }

// Err is the first error, or for a decoder that read everything without
// one, whether bytes are left over.
func (c *Codec) Err() error {
	if c.err == nil && c.dec && len(c.buf) != 0 {
		return fmt.Errorf("%d bytes of state left over", len(c.buf))
	}
	return c.err
}

// Failf records a decoded value out of its domain (a state type's own
// checks); the first error wins.
func (c *Codec) Failf(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf(format, args...)
	}
}

func (c *Codec) uvarint() uint64 {
	if c.err != nil {
		return 0
	}
	n, k := binary.Uvarint(c.buf)
	if k <= 0 {
		c.err = ErrShort
		return 0
	}
	c.buf = c.buf[k:]
	return n
}

func (c *Codec) take(n int) []byte {
	if c.err != nil {
		return nil
	}
	if n > len(c.buf) {
		c.err = ErrShort
		return nil
	}
	b := c.buf[:n:n]
	c.buf = c.buf[n:]
	return b
}

// length reads a length that must fit in what is left (each unit takes at
// least a byte); plus1 lengths keep nil apart from empty (0 is nil).
func (c *Codec) length() int {
	n := c.uvarint()
	if c.err == nil && (n > MaxLen || n > uint64(len(c.buf))+1) {
		c.err = fmt.Errorf("state length %d past the end", n)
	}
	if c.err != nil {
		return 0
	}
	return int(n)
}

// Bool codes a bool.
func (c *Codec) Bool(p *bool) {
	if !c.dec {
		b := byte(0)
		if *p {
			b = 1
		}
		c.buf = append(c.buf, b)
		return
	}
	b := c.take(1)
	switch {
	case b == nil:
		*p = false
	case b[0] > 1:
		c.Failf("bad bool in state")
		*p = false
	default:
		*p = b[0] == 1
	}
}

// Int codes an int.
func (c *Codec) Int(p *int) {
	if !c.dec {
		c.buf = binary.AppendVarint(c.buf, int64(*p))
		return
	}
	*p = 0
	if c.err != nil {
		return
	}
	n, k := binary.Varint(c.buf)
	if k <= 0 {
		c.err = ErrShort
		return
	}
	c.buf = c.buf[k:]
	if n < math.MinInt || n > math.MaxInt {
		c.Failf("%d overflows int", n)
		return
	}
	*p = int(n)
}

// Range codes an int that must lie in [lo, hi] (an offset into a buffer,
// a count of something held).
func (c *Codec) Range(p *int, lo, hi int) {
	c.Int(p)
	if c.dec && (*p < lo || *p > hi) {
		c.Failf("state value %d outside [%d, %d]", *p, lo, hi)
		*p = lo
	}
}

// Uint64 codes a uint64.
func (c *Codec) Uint64(p *uint64) {
	if !c.dec {
		c.buf = binary.AppendUvarint(c.buf, *p)
		return
	}
	*p = c.uvarint()
}

// Enum codes a value of an enumeration of n values, 0 to n-1.
func Enum[E ~int | ~uint8](c *Codec, p *E, n int) {
	if !c.dec {
		c.buf = binary.AppendUvarint(c.buf, uint64(*p))
		return
	}
	v := c.uvarint()
	if c.err == nil && v >= uint64(n) {
		c.Failf("state value %d outside its %d-value enum", v, n)
	}
	if c.err != nil {
		v = 0
	}
	*p = E(v)
}

// Rune codes a rune (any int32).
func (c *Codec) Rune(p *rune) {
	v := int(*p)
	c.Range(&v, math.MinInt32, math.MaxInt32)
	*p = rune(v)
}

// String codes a string.
func (c *Codec) String(p *string) {
	if !c.dec {
		c.buf = binary.AppendUvarint(c.buf, uint64(len(*p)))
		c.buf = append(c.buf, *p...)
		return
	}
	*p = string(c.take(c.length()))
}

// ByteSlice codes a byte slice, nil apart from empty.
func (c *Codec) ByteSlice(p *[]byte) {
	if !c.dec {
		if *p == nil {
			c.buf = append(c.buf, 0)
			return
		}
		c.buf = binary.AppendUvarint(c.buf, uint64(len(*p))+1)
		c.buf = append(c.buf, *p...)
		return
	}
	*p = nil
	if n := c.length(); n > 0 {
		if b := c.take(n - 1); b != nil {
			*p = append(make([]byte, 0, n-1), b...)
		}
	}
}

// Slice codes a slice whose elements elem codes, nil apart from empty.
func Slice[T any](c *Codec, p *[]T, elem func(*Codec, *T)) {
	if !c.dec {
		if *p == nil {
			c.buf = append(c.buf, 0)
			return
		}
		c.buf = binary.AppendUvarint(c.buf, uint64(len(*p))+1)
		for i := range *p {
			elem(c, &(*p)[i])
		}
		return
	}
	*p = nil
	n := c.length()
	if n == 0 {
		return
	}
	s := make([]T, n-1)
	for i := range s {
		if elem(c, &s[i]); c.err != nil {
			return
		}
	}
	*p = s
}

// Strings codes a string slice.
func Strings(c *Codec, p *[]string) { Slice(c, p, (*Codec).String) }

// Map codes a map, its entries in key order so equal maps encode equally;
// nil apart from empty.
func Map[K cmp.Ordered, V any](c *Codec, p *map[K]V, key func(*Codec, *K), val func(*Codec, *V)) {
	if !c.dec {
		if *p == nil {
			c.buf = append(c.buf, 0)
			return
		}
		keys := make([]K, 0, len(*p))
		for k := range *p {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		c.buf = binary.AppendUvarint(c.buf, uint64(len(keys))+1)
		for _, k := range keys {
			v := (*p)[k]
			key(c, &k)
			val(c, &v)
		}
		return
	}
	*p = nil
	n := c.length()
	if n == 0 {
		return
	}
	m := make(map[K]V, n-1)
	for range n - 1 {
		var k K
		var v V
		key(c, &k)
		val(c, &v)
		if c.err != nil {
			return
		}
		m[k] = v
	}
	*p = m
}

// Byte codes a byte.
func (c *Codec) Byte(p *byte) {
	if !c.dec {
		c.buf = append(c.buf, *p)
		return
	}
	*p = 0
	if b := c.take(1); b != nil {
		*p = b[0]
	}
}

// Failed reports whether an error was recorded (unlike Err, it does not
// count bytes left for the rest of a state as one).
func (c *Codec) Failed() bool { return c.err != nil }

// Fixed codes len(p) bytes as they are (a digest, a key): the length is
// the type's, not the state's.
func (c *Codec) Fixed(p []byte) {
	if !c.dec {
		c.buf = append(c.buf, p...)
		return
	}
	b := c.take(len(p))
	if b == nil {
		clear(p)
		return
	}
	copy(p, b)
}
