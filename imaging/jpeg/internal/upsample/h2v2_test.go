package upsample

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func checkH2V2(t *testing.T, near, far []byte) {
	t.Helper()
	n := len(near)
	got, want := bytes.Repeat([]byte{0xa5}, 2*n+8), bytes.Repeat([]byte{0xa5}, 2*n+8)
	H2V2Fancy(got[:2*n], near, far, make([]int16, n+2))
	h2v2FancyGo(want[:2*n], near, far)
	if !bytes.Equal(got, want) {
		t.Fatalf("near %v far %v:\n got %v\nwant %v", near, far, got, want)
	}
}

// TestH2V2FancyMatchesGo is the differential test of H2V2Fancy (assembly for whole groups of 16,
// where the CPU has it) against jdsample.c's loop, over every row length up to 100 with random and
// extreme samples; bytes past the row must stay untouched.
func TestH2V2FancyMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 1; n <= 100; n++ {
		for trial := range 100 {
			near, far := make([]byte, n), make([]byte, n)
			for i := range n {
				switch trial % 3 {
				case 0:
					near[i], far[i] = byte(rng.Uint32()), byte(rng.Uint32())
				case 1:
					near[i], far[i] = 255, 255
				default:
					near[i], far[i] = byte(rng.IntN(2)*255), byte(rng.IntN(2)*255)
				}
			}
			checkH2V2(t, near, far)
		}
	}
}

// FuzzH2V2Fancy compares H2V2Fancy with jdsample.c's loop on arbitrary rows.
func FuzzH2V2Fancy(f *testing.F) {
	f.Add([]byte("\x00\xff\x10\x20\x30\x40\x50\x60\x70\x80\x90\xa0\xb0\xc0\xd0\xe0\xf0\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x11\x12"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := len(data) / 2
		if n == 0 {
			return
		}
		checkH2V2(t, data[:n], data[n:2*n])
	})
}

func BenchmarkH2V2FancyRow(b *testing.B) {
	const n = 960
	near, far := make([]byte, n), make([]byte, n)
	for i := range near {
		near[i], far[i] = byte(i*7), byte(i*13)
	}
	out, sums := make([]byte, 2*n), make([]int16, n+2)
	for b.Loop() {
		H2V2Fancy(out, near, far, sums)
	}
}
