package ycc

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestToRGBMatchesGo is the differential test of ToRGB (assembly for whole groups of eight, where the
// CPU has it) against toRGBGo, over every row length up to 70 and random and extreme samples; the
// bytes past the row must stay untouched.
func TestToRGBMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 0; n <= 70; n++ {
		for trial := range 200 {
			ys, cbs, crs := make([]byte, n), make([]byte, n), make([]byte, n)
			for i := range n {
				switch trial % 3 {
				case 0:
					ys[i], cbs[i], crs[i] = byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32())
				default: // the corners of the colour cube, where the range limit clamps
					pick := []byte{0, 1, 127, 128, 254, 255}
					ys[i], cbs[i], crs[i] = pick[rng.IntN(6)], pick[rng.IntN(6)], pick[rng.IntN(6)]
				}
			}
			got, want := bytes.Repeat([]byte{0xa5}, 3*n+8), bytes.Repeat([]byte{0xa5}, 3*n+8)
			ToRGB(got[:3*n], ys, cbs, crs)
			toRGBGo(want[:3*n], ys, cbs, crs)
			if !bytes.Equal(got, want) {
				t.Fatalf("n=%d y %v cb %v cr %v:\n got %v\nwant %v", n, ys, cbs, crs, got, want)
			}
		}
	}
}

// TestToRGBAllSamples covers every (y, cb, cr) triple once.
func TestToRGBAllSamples(t *testing.T) {
	const n = 256 * 256
	ys, cbs, crs := make([]byte, n), make([]byte, n), make([]byte, n)
	got, want := make([]byte, 3*n), make([]byte, 3*n)
	for y := range 256 {
		for i := range n {
			ys[i], cbs[i], crs[i] = byte(y), byte(i>>8), byte(i)
		}
		ToRGB(got, ys, cbs, crs)
		toRGBGo(want, ys, cbs, crs)
		if !bytes.Equal(got, want) {
			t.Fatalf("y=%d: rows differ", y)
		}
	}
}

// FuzzToRGB compares ToRGB with toRGBGo on arbitrary rows.
func FuzzToRGB(f *testing.F) {
	f.Add([]byte("\x00\x80\xff\x10\x20\x30\x40\x50\x60\x70\x80\x90\xa0\xb0\xc0\xd0\xe0\xf0\x01\x02\x03\x04\x05\x06"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := len(data) / 3
		ys, cbs, crs := data[:n], data[n:2*n], data[2*n:3*n]
		got, want := make([]byte, 3*n), make([]byte, 3*n)
		ToRGB(got, ys, cbs, crs)
		toRGBGo(want, ys, cbs, crs)
		if !bytes.Equal(got, want) {
			t.Fatalf("y %v cb %v cr %v:\n got %v\nwant %v", ys, cbs, crs, got, want)
		}
	})
}

func BenchmarkToRGBRow(b *testing.B) {
	const w = 1920
	ys, cbs, crs := make([]byte, w), make([]byte, w), make([]byte, w)
	for i := range ys {
		ys[i], cbs[i], crs[i] = byte(i*7), byte(i*13), byte(i*29)
	}
	out := make([]byte, 3*w)
	for b.Loop() {
		ToRGB(out, ys, cbs, crs)
	}
}
