package features

import (
	"bytes"
	"encoding/base64"
	"testing"
)

// TestAppendBase64 is the differential test of the piecewise vector
// encoder against encoding/base64 over the joined bytes: every split of
// pieces around the three-byte groups, empty pieces, lengths past the
// vector loop's blocks.
func TestAppendBase64(t *testing.T) {
	data := make([]byte, 1000)
	for i := range data {
		data[i] = byte(i*131 + i>>3)
	}
	check := func(b Blob) {
		t.Helper()
		joined := b.Bytes()
		want := base64.StdEncoding.AppendEncode([]byte("x"), joined)
		if got := appendBase64([]byte("x"), b); !bytes.Equal(got, want) {
			t.Fatalf("pieces %v: %q, want %q", pieceLens(b), got, want)
		}
	}
	for _, n := range []int{0, 1, 2, 3, 4, 27, 28, 29, 30, 31, 32, 33, 95, 96, 97, 1000} {
		for cut1 := 0; cut1 <= min(n, 40); cut1++ {
			for _, cut2 := range []int{cut1, cut1 + 1, cut1 + 2, cut1 + 3, n - 2, n - 1, n} {
				if cut2 < cut1 || cut2 > n {
					continue
				}
				check(Blob{data[:cut1], data[cut1:cut2], data[cut2:n]})
				check(Blob{data[:cut1], nil, data[cut1:cut2], {}, data[cut2:n]})
			}
		}
	}
	check(nil)
	check(Blob{})
}

func pieceLens(b Blob) []int {
	out := make([]int, len(b))
	for i, p := range b {
		out[i] = len(p)
	}
	return out
}

func TestBlobBytes(t *testing.T) {
	if Blob(nil).Bytes() != nil {
		t.Error("nil Blob: want nil bytes (JSON null)")
	}
	if b := (Blob{}).Bytes(); b == nil || len(b) != 0 {
		t.Errorf("empty Blob: %v, want empty non-nil", b)
	}
	one := []byte("abc")
	if b := (Blob{one}).Bytes(); &b[0] != &one[0] {
		t.Error("a one-piece Blob copies its piece")
	}
	if b := (Blob{one, []byte("de")}).Bytes(); string(b) != "abcde" || (Blob{one, []byte("de")}).Len() != 5 {
		t.Errorf("joined %q", b)
	}
}

func FuzzAppendBase64(f *testing.F) {
	f.Add([]byte("hello, pixel values"), uint8(4), uint8(9))
	f.Fuzz(func(t *testing.T, data []byte, a, b uint8) {
		i, j := min(int(a), len(data)), min(int(b), len(data))
		i, j = min(i, j), max(i, j)
		got := appendBase64(nil, Blob{data[:i], data[i:j], data[j:]})
		if want := base64.StdEncoding.EncodeToString(data); string(got) != want {
			t.Fatalf("split %d,%d of %d bytes: %q, want %q", i, j, len(data), got, want)
		}
	})
}

// TestBase64Stream: at every boundary between two or three pieces, the
// stream's encoded front and its carry, with whatever follows the carry,
// give the base64 of the whole at once.
func TestBase64Stream(t *testing.T) {
	data := make([]byte, 40)
	for i := range data {
		data[i] = byte(i*53 + 7)
	}
	tail := []byte{0xc3, 0x00, 0xff, 0x10}
	for n := 0; n <= len(data); n++ {
		d := data[:n]
		for i := 0; i <= n; i++ {
			for j := i; j <= n; j++ {
				var s base64Stream
				for _, p := range [][]byte{d[:i], d[i:j], d[j:]} {
					s.write(p)
				}
				b64, rest := s.dst, s.carry[:s.c]
				if len(rest) > 2 || len(b64) != (n-len(rest))/3*4 {
					t.Fatalf("%d bytes cut at %d,%d: %d encoded, %d left", n, i, j, len(b64), len(rest))
				}
				for k := 0; k <= len(tail); k++ {
					got := appendBase64(bytes.Clone(b64), Blob{rest, tail[:k]})
					want := base64.StdEncoding.EncodeToString(append(bytes.Clone(d), tail[:k]...))
					if string(got) != want {
						t.Fatalf("%d bytes cut at %d,%d, %d after: %q, want %q", n, i, j, k, got, want)
					}
				}
			}
		}
	}
}
