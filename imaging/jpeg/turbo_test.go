//go:build libjpegturbo && cgo

package jpeg

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	stdjpeg "image/jpeg"
	"os"
	"path/filepath"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// TestGoDecoderMatchesLibjpegTurbo is the differential test of the Go decoder against libjpeg-turbo
// itself (the library Pillow uses), over the corpus JPEGs and images Go's encoder writes at many sizes
// and qualities (4:2:0 colour and grayscale).
func TestGoDecoderMatchesLibjpegTurbo(t *testing.T) {
	inputs := map[string][]byte{}
	files, _ := filepath.Glob(filepath.Join(testenv.SharedDir(t), "multimodal", "images", "*.jpg"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[filepath.Base(f)] = data
	}
	for _, sz := range [][2]int{{1, 1}, {2, 3}, {5, 2}, {7, 9}, {15, 17}, {16, 16}, {33, 31}, {100, 75}, {257, 129}} {
		for _, q := range []int{10, 50, 90, 100} {
			w, h := sz[0], sz[1]
			rgba := image.NewRGBA(image.Rect(0, 0, w, h))
			gray := image.NewGray(rgba.Rect)
			for y := 0; y < h; y++ {
				for x := 0; x < w; x++ {
					v := uint8((x*37 + y*91 + (x*y)%23) % 256)
					rgba.Set(x, y, color.RGBA{v, uint8(x * 255 / max(w, 1)), uint8(255 - y*3), 255})
					gray.SetGray(x, y, color.Gray{v})
				}
			}
			for kind, m := range map[string]image.Image{"rgb": rgba, "gray": gray} {
				var buf bytes.Buffer
				if err := stdjpeg.Encode(&buf, m, &stdjpeg.Options{Quality: q}); err != nil {
					t.Fatal(err)
				}
				inputs[fmt.Sprintf("go_%s_%dx%d_q%d", kind, w, h, q)] = buf.Bytes()
			}
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
