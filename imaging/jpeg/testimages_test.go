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

// corpusJPEGs is the shared corpus's JPEGs of at most maxSize bytes, by file name.
func corpusJPEGs(t testing.TB, maxSize int64) map[string][]byte {
	inputs := map[string][]byte{}
	files, _ := filepath.Glob(filepath.Join(testenv.SharedDir(t), "multimodal", "images", "*.jpg"))
	for _, f := range files {
		if fi, err := os.Stat(f); err != nil || fi.Size() > maxSize {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[filepath.Base(f)] = data
	}
	return inputs
}

// addCorpusSeeds adds the corpus's small JPEGs to a fuzz target's seeds (none when the corpus is
// absent: fuzzing then starts from its other seeds).
func addCorpusSeeds(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(testenv.RepoRoot(f)), "shared", "multimodal", "images", "*.jpg"))
	for _, p := range files {
		if fi, err := os.Stat(p); err == nil && fi.Size() < 32<<10 {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
}

// addGoEncoded adds the image of w x h pixels given by at, encoded by Go's encoder at quality q, as a
// 4:2:0 colour JPEG and as a grayscale one of its red channel.
func addGoEncoded(t testing.TB, inputs map[string][]byte, w, h, q int, at func(x, y int) color.RGBA) {
	rgba := image.NewRGBA(image.Rect(0, 0, w, h))
	gray := image.NewGray(rgba.Rect)
	for y := range h {
		for x := range w {
			c := at(x, y)
			rgba.Set(x, y, c)
			gray.SetGray(x, y, color.Gray{c.R})
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
