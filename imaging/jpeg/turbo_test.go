//go:build libjpegturbo && cgo

package jpeg

import (
	"bytes"
	"image/color"
	"testing"
)

// TestGoDecoderMatchesLibjpegTurbo is the differential test of the Go decoder against libjpeg-turbo
// itself (the library Pillow uses), over the corpus JPEGs and images Go's encoder writes at many sizes
// and qualities (4:2:0 colour and grayscale).
func TestGoDecoderMatchesLibjpegTurbo(t *testing.T) {
	inputs := corpusJPEGs(t, 1<<30)
	for _, sz := range [][2]int{{1, 1}, {2, 3}, {5, 2}, {7, 9}, {15, 17}, {16, 16}, {33, 31}, {100, 75}, {257, 129}} {
		for _, q := range []int{10, 50, 90, 100} {
			w, h := sz[0], sz[1]
			addGoEncoded(t, inputs, w, h, q, func(x, y int) color.RGBA {
				return color.RGBA{uint8((x*37 + y*91 + (x*y)%23) % 256), uint8(x * 255 / max(w, 1)), uint8(255 - y*3), 255}
			})
		}
	}
	for name, data := range inputs {
		want, werr := decodeBackend(data, 0)
		got, gerr := decodeGo(data, 0)
		switch {
		case werr != nil || gerr != nil:
			if (werr == nil) != (gerr == nil) {
				t.Errorf("%s: libjpeg-turbo %v, Go %v", name, werr, gerr)
			}
		case !bytes.Equal(got.Pix, want.Pix):
			n := 0
			for i := range got.Pix {
				if got.Pix[i] != want.Pix[i] {
					n++
				}
			}
			t.Errorf("%s: %d of %d samples differ", name, n, len(got.Pix))
		}
	}
}
