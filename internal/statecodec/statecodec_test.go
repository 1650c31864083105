package statecodec

import (
	"reflect"
	"testing"
)

type sample struct {
	b     bool
	i     int
	s     string
	raw   []byte
	empty []byte
	e     uint8
	list  []string
	m     map[string]int
	fixed [4]byte
	r     rune
	by    byte
	u     uint64
}

func (x *sample) codec(c *Codec) {
	c.Bool(&x.b)
	c.Int(&x.i)
	c.String(&x.s)
	c.ByteSlice(&x.raw)
	c.ByteSlice(&x.empty)
	Enum(c, &x.e, 3)
	Strings(c, &x.list)
	Map(c, &x.m, (*Codec).String, (*Codec).Int)
	c.Fixed(x.fixed[:])
	c.Rune(&x.r)
	c.Byte(&x.by)
	c.Uint64(&x.u)
}

func TestRoundTrip(t *testing.T) {
	for _, in := range []sample{
		{},
		{b: true, i: -5, s: "ü🌍", raw: []byte("x"), empty: []byte{}, e: 2, list: []string{"a", ""},
			m: map[string]int{"b": 2, "a": 1}, fixed: [4]byte{1, 2, 3, 4}, r: -1, by: 255, u: 1 << 63},
	} {
		enc := NewEncoder(nil)
		in.codec(enc)
		var out sample
		dec := NewDecoder(enc.Bytes())
		out.codec(dec)
		if err := dec.Err(); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(in, out) {
			t.Fatalf("got %+v, want %+v", out, in)
		}
		// Every truncation is an error, never a panic.
		for n := range len(enc.Bytes()) {
			var cut sample
			d := NewDecoder(enc.Bytes()[:n])
			if cut.codec(d); d.Err() == nil {
				t.Fatalf("truncated to %d of %d bytes: no error", n, len(enc.Bytes()))
			}
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		run  func(c *Codec)
	}{
		{"enum out of range", []byte{3}, func(c *Codec) { var e uint8; Enum(c, &e, 3) }},
		{"bad bool", []byte{2}, func(c *Codec) { var b bool; c.Bool(&b) }},
		{"length past the end", []byte{0x7f, 'a'}, func(c *Codec) { var s string; c.String(&s) }},
		{"slice longer than input", []byte{0x10, 0}, func(c *Codec) { var s []int; Slice(c, &s, (*Codec).Int) }},
		{"left over", []byte{0, 0}, func(c *Codec) { var b bool; c.Bool(&b) }},
		{"range", []byte{0x08}, func(c *Codec) { var i int; c.Range(&i, 0, 3) }},
		{"offset", []byte{0x08}, func(c *Codec) { var i int; c.Int(&i); c.Within(3, i) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewDecoder(tc.data)
			if tc.run(c); c.Err() == nil {
				t.Fatal("no error")
			}
		})
	}
	// A settled state's offsets are not checked: it is only read.
	c := NewDecoder([]byte{0x08})
	c.SetSettled(true)
	var i int
	c.Int(&i)
	if c.Within(3, i); c.Err() != nil {
		t.Fatal(c.Err())
	}
}
