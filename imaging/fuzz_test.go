package imaging

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// fuzzOptions bound what one input may allocate (4 Mpx), so the fuzzer explores headers that
// claim huge sizes without running out of memory: the limit is checked before any pixel buffer.
var fuzzOptions = Options{MaxPixels: 1 << 22, Background: [3]uint8{255, 255, 255}}

// addSeeds seeds a fuzz target with the small files of the shared corpus (when present) and a few
// signatures with nothing behind them.
func addSeeds(f *testing.F) {
	for _, s := range []string{"", "BM", "GIF89a", "\xff\xd8\xff", "\x89PNG\r\n\x1a\n", "RIFF\x00\x00\x00\x00WEBPVP8 "} {
		f.Add([]byte(s))
	}
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(testenv.RepoRoot(f)), "shared", "multimodal", "images", "*"))
	for _, p := range files {
		if fi, err := os.Stat(p); err == nil && fi.Size() < 32<<10 {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
}

// FuzzLoad: any bytes give an RGB image of the size Probe announced, an *Error, or a *LimitError
// (a header over the pixel limit); never a panic.
func FuzzLoad(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		img, err := Load(data, fuzzOptions)
		if err != nil {
			switch err.(type) {
			case *Error, *LimitError:
			default:
				t.Fatalf("Load error %T %v is neither an *Error nor a *LimitError", err, err)
			}
			return
		}
		if img.Width <= 0 || img.Height <= 0 || len(img.Pix) != 3*img.Width*img.Height {
			t.Fatalf("Load gave %dx%d with %d bytes", img.Width, img.Height, len(img.Pix))
		}
		info, err := Probe(data, fuzzOptions)
		if err != nil || info.Width != img.Width || info.Height != img.Height {
			t.Fatalf("Probe %+v %v disagrees with Load %dx%d", info, err, img.Width, img.Height)
		}
	})
}

// FuzzProbe: Probe never panics, and whatever it refuses Load refuses with the same message.
func FuzzProbe(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		_, perr := Probe(data, fuzzOptions)
		if perr == nil {
			return
		}
		if _, lerr := Load(data, fuzzOptions); lerr == nil || lerr.Error() != perr.Error() {
			t.Fatalf("Probe refused with %q, Load gave %v", perr, lerr)
		}
	})
}
