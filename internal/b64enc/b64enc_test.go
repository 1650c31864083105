package b64enc

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"testing"
)

// path is one of Encode's encoders, tested whether or not Encode would
// choose it on this CPU.
type path struct {
	name   string
	encode func(dst, src []byte)
	ok     bool // this CPU runs it
}

func paths() []path {
	return []path{
		{"Encode", Encode, true},
		{"VBMI", encodeVBMI, haveVBMI},
		{"asm", encodeAsm, true},
		{"generic", encodeGeneric, true},
	}
}

// guard fills the bytes around an encoder's output so a write outside it
// shows.
const guard = 0xA5

// check encodes buf[so:so+n] with p into a buffer at offset off of a
// larger one and compares the whole buffer with encoding/base64's output in
// the same place.
func check(t *testing.T, p path, buf []byte, so, n, off int) {
	t.Helper()
	src := buf[so : so+n]
	n = base64.StdEncoding.EncodedLen(len(src))
	got := bytes.Repeat([]byte{guard}, off+n+64)
	want := bytes.Clone(got)
	p.encode(got[off:off+n], src)
	base64.StdEncoding.Encode(want[off:off+n], src)
	if !bytes.Equal(got, want) {
		i := 0
		for got[i] == want[i] {
			i++
		}
		t.Fatalf("%s: %d bytes at source offset %d, output offset %d: first difference at output byte %d (%q, want %q)",
			p.name, len(src), so, off, i-off, got[i], want[i])
	}
}

// TestAllLengthsAllAlignments covers every length up to 300 (the masked
// last blocks, one and two of them, and the 4-block loop's entry) at every
// source and output alignment within a cache line.
func TestAllLengthsAllAlignments(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 300+64)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	for _, p := range paths() {
		if !p.ok {
			t.Logf("%s: not on this CPU", p.name)
			continue
		}
		for n := 0; n <= 300; n++ {
			for so := range 64 {
				for do := range 64 {
					check(t, p, buf, so, n, do)
				}
			}
		}
	}
}

// TestLarge covers random buffers of megabytes (and lengths around the
// chunker's 48 KB pieces) at a few alignments.
func TestLarge(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	lens := []int{48 << 10, 48<<10 + 1, 48<<10 + 2, 48<<10 - 1, 1 << 20, 1<<20 + 1, 1<<20 + 2, 11_059_200}
	for range 8 {
		lens = append(lens, r.IntN(4<<20))
	}
	for _, n := range lens {
		buf := make([]byte, n+64)
		for i := range buf {
			buf[i] = byte(r.Uint32())
		}
		for _, p := range paths() {
			if !p.ok {
				continue
			}
			for _, so := range []int{0, 1, 7, 33, 63} {
				check(t, p, buf, so, n, (so*5)%64)
			}
		}
	}
}

// TestAlphabet runs every six-bit value through every output position of
// a group (the bytes 0x00..0xff in each of the three places).
func TestAlphabet(t *testing.T) {
	var src []byte
	for a := range 256 {
		for pos := range 3 {
			g := [3]byte{0x55, 0xAA, 0x0F}
			g[pos] = byte(a)
			src = append(src, g[:]...)
		}
	}
	for _, p := range paths() {
		if p.ok {
			check(t, p, src, 0, len(src), 0)
		}
	}
}

func FuzzEncode(f *testing.F) {
	f.Add([]byte(""), uint8(0))
	f.Add([]byte("f"), uint8(1))
	f.Add(bytes.Repeat([]byte{0xff, 0x00, 0x7f}, 100), uint8(17))
	f.Fuzz(func(t *testing.T, src []byte, off uint8) {
		for _, p := range paths() {
			if p.ok {
				check(t, p, src, 0, len(src), int(off%64))
			}
		}
	})
}

// BenchmarkEncode encodes 1 MB, the chunker's chunk, by each encoder.
func BenchmarkEncode(b *testing.B) { benchEncode(b, 1<<20) }

// BenchmarkEncodePiece encodes 48 KB, the most the chunker hands an
// encoder at a time.
func BenchmarkEncodePiece(b *testing.B) { benchEncode(b, 48<<10) }

func benchEncode(b *testing.B, size int) {
	src := make([]byte, size)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	dst := make([]byte, base64.StdEncoding.EncodedLen(len(src)))
	for _, p := range paths() {
		b.Run(p.name, func(b *testing.B) {
			if !p.ok {
				b.Skip("not on this CPU")
			}
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				p.encode(dst, src)
			}
		})
	}
}
