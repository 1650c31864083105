package idct

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// both runs islow (the assembly where the CPU has it) and islowGo on the same block and
// returns both 8x8 outputs, written into strided buffers whose padding must stay untouched.
func both(b, q *Block) (got, want []byte) {
	const stride = 11
	got, want = make([]byte, 8*stride), make([]byte, 8*stride)
	for i := range got {
		got[i], want[i] = 0xa5, 0xa5
	}
	islow(b, q, got, stride)
	islowGo(b, q, want, stride)
	return got, want
}

// TestIslowMatchesGo is the differential test of the IDCT assembly against the Go IDCT: typical
// coefficient blocks (sparse, small), blocks with zero columns and rows (the shortcuts), and extreme
// values whose int32 products wrap.
func TestIslowMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200000 {
		var b, q Block
		for k := range q {
			q[k] = int32(1 + rng.IntN(255))
		}
		density := []int{2, 6, 20, 64}[i%4]
		limit := []int32{4, 64, 1024, 32768, 1 << 30}[i/4%5]
		for k := range b {
			if rng.IntN(64) < density {
				b[k] = int32(rng.Int64N(2*int64(limit)) - int64(limit))
			}
		}
		switch i % 7 {
		case 1: // some whole columns zero below the DC row
			for c := range 8 {
				if rng.IntN(2) == 0 {
					for r := 1; r < 8; r++ {
						b[8*r+c] = 0
					}
				}
			}
		case 2: // only the first row
			for k := 8; k < 64; k++ {
				b[k] = 0
			}
		case 4: // DC only
			clear(b[1:])
		case 3: // 16-bit quantizers
			for k := range q {
				q[k] = int32(rng.IntN(65536))
			}
		}
		got, want := both(&b, &q)
		if !bytes.Equal(got, want) {
			t.Fatalf("block %v q %v:\n got %v\nwant %v", b, q, got, want)
		}
	}
}

// FuzzIslow compares the IDCT assembly with the Go IDCT on arbitrary coefficients and quantizers.
func FuzzIslow(f *testing.F) {
	f.Add(make([]byte, 2*4*64))
	f.Fuzz(func(t *testing.T, data []byte) {
		var b, q Block
		for k := range b {
			if len(data) >= 8 {
				b[k] = int32(binary.LittleEndian.Uint32(data))
				q[k] = int32(binary.LittleEndian.Uint32(data[4:]))
				data = data[8:]
			}
		}
		if got, want := both(&b, &q); !bytes.Equal(got, want) {
			t.Fatalf("block %v q %v:\n got %v\nwant %v", b, q, got, want)
		}
	})
}
