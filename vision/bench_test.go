package vision

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/vrender/vrender/imaging"
	"github.com/vrender/vrender/internal/testenv"
)

// benchImage is a photo-like image: gradients, noise and hard edges.
func benchImage(w, h int) imaging.RGB {
	rng := rand.New(rand.NewPCG(uint64(w), uint64(h)))
	img := imaging.RGB{Width: w, Height: h, Pix: make([]uint8, w*h*3)}
	for y := range h {
		for x := range w {
			for c := range 3 {
				v := (x*200/w + y*55/h + c*40 + rng.IntN(16)) % 256
				if (x/64+y/48)%5 == 0 {
					v = 255 - v
				}
				img.Pix[(y*w+x)*3+c] = uint8(v)
			}
		}
	}
	return img
}

// BenchmarkProcess is the whole processor — resize, normalise, patchify, bf16 — per image, for the
// fast (vLLM default) and slow backends, reusing the output buffer as a server worker does; "/to" is
// ProcessTo handing the patches to a writer that drops them (the server's path, less the encoding). Python's
// PIL path costs ~50 ms at 1280x720.
func BenchmarkProcess(b *testing.B) {
	for _, model := range []struct{ name, config string }{{"qwen2_5_vl", qwen25Config}, {"qwen3_vl", qwen3Config}} {
		q := mustNew(b, model.config, BFloat16)
		for _, sz := range [][2]int{{640, 480}, {1280, 720}, {1920, 1080}} {
			img := benchImage(sz[0], sz[1])
			for _, fast := range []bool{true, false} {
				backend := map[bool]string{true: "fast", false: "slow"}[fast]
				b.Run(fmt.Sprintf("%s/%dx%d/%s", model.name, sz[0], sz[1], backend), func(b *testing.B) {
					kw := Kwargs{UseFast: &fast}
					b.ReportAllocs()
					b.SetBytes(int64(len(img.Pix)))
					var buf []byte
					cpu0 := testenv.CPUTime(b)
					for b.Loop() {
						res, err := q.Process(buf, img, kw)
						if err != nil {
							b.Fatal(err)
						}
						buf = res.PixelValues.Data
					}
					b.ReportMetric(float64(testenv.CPUTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
				})
				b.Run(fmt.Sprintf("%s/%dx%d/%s/to", model.name, sz[0], sz[1], backend), func(b *testing.B) {
					kw := Kwargs{UseFast: &fast}
					b.ReportAllocs()
					b.SetBytes(int64(len(img.Pix)))
					cpu0 := testenv.CPUTime(b)
					for b.Loop() {
						if _, err := q.ProcessTo(io.Discard, img, kw); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(testenv.CPUTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
				})
			}
		}
	}
}

// BenchmarkLoadProcess is an image's whole CPU path in the render, less HTTP and the encoding:
// JPEG bytes decoded (imaging.Load, with the build's JPEG backend) and processed with the fast
// (default) backend, pixel values handed to a writer that drops them. "/load" is the decode alone.
func BenchmarkLoadProcess(b *testing.B) {
	q := mustNew(b, qwen25Config, BFloat16)
	for _, name := range []string{"jpeg_444_1280x720", "jpeg_420_1920x1080"} {
		data, err := os.ReadFile(filepath.Join(testenv.SharedDir(b), "multimodal", "images", name+".jpg"))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name+"/load", func(b *testing.B) {
			cpu0 := testenv.CPUTime(b)
			for b.Loop() {
				if _, err := imaging.Load(data, imaging.DefaultOptions()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(testenv.CPUTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := testenv.CPUTime(b)
			for b.Loop() {
				img, err := imaging.Load(data, imaging.DefaultOptions())
				if err != nil {
					b.Fatal(err)
				}
				if _, err := q.ProcessTo(io.Discard, *img, Kwargs{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(testenv.CPUTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkPrepareData is an image's decode and resize as the render runs it (PrepareData: the
// decoder's rows fed to the resize) against "/whole", Load then Prepare: the whole decoded image,
// then the resize. The pixel values are not written.
func BenchmarkPrepareData(b *testing.B) {
	q := mustNew(b, qwen25Config, BFloat16)
	for _, name := range []string{"jpeg_444_1280x720", "jpeg_420_1920x1080"} {
		data, err := os.ReadFile(filepath.Join(testenv.SharedDir(b), "multimodal", "images", name+".jpg"))
		if err != nil {
			b.Fatal(err)
		}
		for _, whole := range []bool{true, false} {
			prepare, sub := q.PrepareData, "/rows"
			if whole {
				prepare = func(data []byte, opt imaging.Options, kw Kwargs) (*Prepared, error) {
					img, err := imaging.Load(data, opt)
					if err != nil {
						return nil, err
					}
					return q.Prepare(*img, kw)
				}
				sub = "/whole"
			}
			b.Run(name+sub, func(b *testing.B) {
				b.ReportAllocs()
				cpu0 := testenv.CPUTime(b)
				for b.Loop() {
					if _, err := prepare(data, imaging.DefaultOptions(), Kwargs{}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(testenv.CPUTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
