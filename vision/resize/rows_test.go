package resize

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// rowsOf serves src's rows in order, each copied into a buffer reused between calls with slack
// bytes of garbage past its end (as a decoder's batch buffer has), failing at row failAt.
func rowsOf(src []uint8, w, slack, failAt int, rng *rand.Rand) func() ([]uint8, error) {
	buf := make([]uint8, w*3+slack)
	y := 0
	return func() ([]uint8, error) {
		if y == failAt {
			return nil, errRowsTest
		}
		copy(buf, src[y*w*3:(y+1)*w*3])
		for i := w * 3; i < len(buf); i++ {
			buf[i] = uint8(rng.IntN(256))
		}
		y++
		return buf[:w*3], nil
	}
}

var errRowsTest = errors.New("test: row unreadable")

// TestRGBRowsMatchesRGB: the row-fed resize gives RGB's bytes for every method, shrinking and
// enlarging either way, one pass or none, whether rows have the vector kernel's slack or not; and a
// row's error stops it and is returned as it is.
func TestRGBRowsMatchesRGB(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 31))
	sizes := [][2]int{{1, 1}, {3, 7}, {17, 5}, {64, 48}, {101, 33}, {333, 517}}
	for _, m := range []Method{Torch, Pillow} {
		for _, s := range sizes {
			for _, d := range sizes {
				src := make([]uint8, s[0]*s[1]*3)
				for i := range src {
					src[i] = uint8(rng.IntN(256))
				}
				var r, rr Resizer
				want := make([]uint8, d[0]*d[1]*3)
				if err := r.RGB(want, d[0], d[1], src, s[0], s[1], m); err != nil {
					t.Fatal(err)
				}
				for _, slack := range []int{0, rowPad} {
					got := make([]uint8, len(want))
					name := fmt.Sprintf("%v %dx%d -> %dx%d slack %d", m, s[0], s[1], d[0], d[1], slack)
					if err := rr.RGBRows(got, d[0], d[1], rowsOf(src, s[0], slack, -1, rng), s[0], s[1], m); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if !bytes.Equal(got, want) {
						t.Errorf("%s: bytes differ from RGB's", name)
					}
					if err := rr.RGBRows(got, d[0], d[1], rowsOf(src, s[0], slack, s[1]/2, rng), s[0], s[1], m); err != errRowsTest {
						t.Errorf("%s: a row's error came back as %v", name, err)
					}
				}
			}
		}
	}
}
