package imaging

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// benchFile returns the image a benchmark reads: the sizes, a 720p and a 1080p JPEG, 1080p
// PNGs (the 1080p JPEG's pixels re-encoded losslessly, written on demand: RGB, and RGBA as screenshots
// often are, one pixel not quite opaque so the encoder keeps the alpha) and the document-page PNG.
func benchFile(b *testing.B, name string) string {
	dir := filepath.Join(testenv.SharedDir(b), "multimodal", "images")
	if name != "png_rgb_1920x1080" && name != "png_rgba_1920x1080" {
		ext := ".png"
		switch {
		case strings.HasPrefix(name, "jpeg"):
			ext = ".jpg"
		case strings.HasPrefix(name, "webp"):
			ext = ".webp"
		}
		return filepath.Join(dir, name+ext)
	}
	data, err := os.ReadFile(filepath.Join(dir, "jpeg_420_1920x1080.jpg"))
	if err != nil {
		b.Fatal(err)
	}
	img, err := Load(data, DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	rgba := image.NewRGBA(image.Rect(0, 0, img.Width, img.Height))
	for i := 0; i < img.Width*img.Height; i++ {
		copy(rgba.Pix[4*i:4*i+3], img.Pix[3*i:3*i+3])
		rgba.Pix[4*i+3] = 255
	}
	if name == "png_rgba_1920x1080" {
		rgba.Pix[3] = 254
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, rgba); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), name+".png")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

var benchNames = []string{"jpeg_444_1280x720", "jpeg_420_1920x1080", "png_rgb_1920x1080", "png_rgba_1920x1080", "png_doc_1275x1650", "webp_lossy_512x384"}

// BenchmarkLoad is decode + conversion to vLLM's RGB, the work Pillow does in BenchmarkPillowLoad.
func BenchmarkLoad(b *testing.B) {
	for _, name := range benchNames {
		b.Run(name, func(b *testing.B) {
			data, err := os.ReadFile(benchFile(b, name))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			cpu0 := testenv.CPUTime(b)
			for b.Loop() {
				if _, err := Load(data, DefaultOptions()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(testenv.CPUTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkProbe is the header-only path the router uses when it needs no pixels.
func BenchmarkProbe(b *testing.B) {
	for _, name := range benchNames {
		b.Run(name, func(b *testing.B) {
			data, err := os.ReadFile(benchFile(b, name))
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := Probe(data, DefaultOptions()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPillowLoad times the same loads through Pillow 9.4 (testdata/pillow_bench.py, 20 loads
// each after a warm-up) and reports them as ns/op (wall) and cpu-ns/op, for comparison in one run.
func BenchmarkPillowLoad(b *testing.B) {
	py := testenv.PillowPython(b)
	for _, name := range benchNames {
		b.Run(name, func(b *testing.B) {
			out, err := exec.Command(py, filepath.Join("testdata", "pillow_bench.py"), "20", benchFile(b, name)).Output()
			if err != nil {
				b.Fatal(err)
			}
			f := strings.Fields(string(out))
			if len(f) != 3 {
				b.Fatalf("pillow_bench.py: %q", out)
			}
			wall, _ := strconv.ParseFloat(f[1], 64)
			cpu, _ := strconv.ParseFloat(f[2], 64)
			for b.Loop() {
			}
			b.ReportMetric(wall, "ns/op")
			b.ReportMetric(cpu, "cpu-ns/op")
		})
	}
}
