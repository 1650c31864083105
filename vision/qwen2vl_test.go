package vision

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"unicode/utf8"

	"golang.org/x/sys/cpu"

	"github.com/vrender/vrender/imaging"
	"github.com/vrender/vrender/vision/resize"
)

// Preprocessor configs of the shared test models, inline so that unit tests and benchmarks need no
// fixtures.
const (
	qwen25Config = `{"min_pixels": 3136, "max_pixels": 12845056, "patch_size": 14, "temporal_patch_size": 2,
		"merge_size": 2, "image_mean": [0.48145466, 0.4578275, 0.40821073],
		"image_std": [0.26862954, 0.26130258, 0.27577711], "image_processor_type": "Qwen2VLImageProcessor"}`
	qwen3Config = `{"size": {"longest_edge": 16777216, "shortest_edge": 65536}, "patch_size": 16,
		"temporal_patch_size": 2, "merge_size": 2, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
		"image_processor_type": "Qwen2VLImageProcessorFast"}`
)

func mustNew(t testing.TB, config string, d DType) *qwen2VL {
	t.Helper()
	p, err := New([]byte(config), d)
	if err != nil {
		t.Fatal(err)
	}
	return p.(*qwen2VL)
}

func TestSmartResize(t *testing.T) {
	const big = 12845056
	for _, tc := range []struct {
		name                   string
		h, w, factor, min, max int
		wantH, wantW           int
		wantKind               ErrorKind
		wantMsg                string
	}{
		{"720p Qwen2.5", 720, 1280, 28, 3136, big, 728, 1288, 0, ""},
		{"1080p Qwen2.5", 1080, 1920, 28, 3136, big, 1092, 1932, 0, ""},
		{"1080p Qwen3", 1080, 1920, 32, 65536, 16777216, 1088, 1920, 0, ""},
		{"below the factor grows to min_pixels", 8, 8, 28, 3136, big, 56, 56, 0, ""},
		{"56x30 grows", 30, 56, 28, 3136, big, 56, 84, 0, ""},
		{"half rounds to even (1.5 -> 2)", 42, 42, 28, 0, big, 56, 56, 0, ""},
		{"half rounds to even (2.5 -> 2)", 70, 70, 28, 0, big, 56, 56, 0, ""},
		{"max_pixels shrinks", 3456, 4608, 28, 3136, big, 3080, 4116, 0, ""},
		{"shrinking keeps at least one factor", 10000, 60, 28, 0, 784, 336, 28, 0, ""},
		{"ratio 200 is allowed", 2800, 14, 28, 3136, big, 812, 28, 0, ""},
		{"ratio 214", 14, 3000, 28, 3136, big, 0, 0, AspectRatio,
			"absolute aspect ratio must be smaller than 200, got 214.28571428571428"},
		{"ratio repr of a whole float", 1, 201, 28, 3136, big, 0, 0, AspectRatio,
			"absolute aspect ratio must be smaller than 200, got 201.0"},
		{"no min_pixels lets a small image vanish", 10, 10, 28, 0, big, 0, 0, EmptyResize, ""},
		{"max_pixels zero", 100, 100, 28, 0, 0, 0, 0, InvalidKwargs, ""},
		{"absurd min_pixels", 100, 100, 28, 1 << 50, 1 << 52, 0, 0, TooLarge, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, w, err := smartResize(tc.h, tc.w, tc.factor, tc.min, tc.max)
			if tc.wantKind != 0 {
				var e *Error
				if !errors.As(err, &e) || e.Kind != tc.wantKind {
					t.Fatalf("got %d x %d, %v; want a %v error", h, w, err, tc.wantKind)
				}
				if tc.wantMsg != "" && e.Message != tc.wantMsg {
					t.Fatalf("message %q, want %q", e.Message, tc.wantMsg)
				}
				return
			}
			if err != nil || h != tc.wantH || w != tc.wantW {
				t.Fatalf("got %d x %d, %v; want %d x %d", h, w, err, tc.wantH, tc.wantW)
			}
		})
	}
}

func TestPlan(t *testing.T) {
	q25 := mustNew(t, qwen25Config, BFloat16)
	q3 := mustNew(t, qwen3Config, BFloat16)
	for _, tc := range []struct {
		name   string
		p      Processor
		w, h   int
		kw     string
		grid   [3]int
		tokens int
	}{
		{"Qwen2.5 720p", q25, 1280, 720, ``, [3]int{1, 52, 92}, 1196},
		{"Qwen2.5 1080p", q25, 1920, 1080, ``, [3]int{1, 78, 138}, 2691},
		{"Qwen2.5 56x30", q25, 56, 30, ``, [3]int{1, 4, 6}, 6},
		{"Qwen3 720p", q3, 1280, 720, ``, [3]int{1, 44, 80}, 880},
		{"max_pixels kwarg", q25, 1280, 720, `{"max_pixels": 200704}`, [3]int{1, 24, 42}, 252},
		{"min_pixels kwarg", q25, 56, 30, `{"min_pixels": 100352}`, [3]int{1, 18, 32}, 144},
		{"size kwarg", q25, 1280, 720, `{"size": {"shortest_edge": 3136, "longest_edge": 200704}}`, [3]int{1, 24, 42}, 252},
		{"max_pixels beats size", q25, 1280, 720, `{"size": {"shortest_edge": 3136, "longest_edge": 1}, "max_pixels": 200704}`, [3]int{1, 24, 42}, 252},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kw, err := ParseKwargs([]byte(tc.kw))
			if err != nil {
				t.Fatal(err)
			}
			plan, err := tc.p.Plan(tc.w, tc.h, kw)
			if err != nil {
				t.Fatal(err)
			}
			if plan.GridTHW != tc.grid || plan.NumTokens != tc.tokens {
				t.Fatalf("plan %+v, want grid %v tokens %d", plan, tc.grid, tc.tokens)
			}
		})
	}
}

func TestKwargs(t *testing.T) {
	i := func(v int) *int { return &v }
	b := func(v bool) *bool { return &v }
	for _, tc := range []struct {
		name, raw string
		want      Kwargs
		wantErr   bool
	}{
		{"empty", ``, Kwargs{}, false},
		{"null", `null`, Kwargs{}, false},
		{"all", `{"min_pixels": 100, "max_pixels": 1e6, "use_fast": false, "size": {"shortest_edge": 1, "longest_edge": 2}, "fps": 2}`,
			Kwargs{MinPixels: i(100), MaxPixels: i(1000000), UseFast: b(false), Size: &SizeBounds{1, 2}}, false},
		{"nulls leave unset", `{"min_pixels": null, "use_fast": null}`, Kwargs{}, false},
		{"not an object", `[1]`, Kwargs{}, true},
		{"negative", `{"max_pixels": -1}`, Kwargs{}, true},
		{"fraction", `{"min_pixels": 1.5}`, Kwargs{}, true},
		{"string", `{"max_pixels": "big"}`, Kwargs{}, true},
		{"use_fast string", `{"use_fast": "yes"}`, Kwargs{}, true},
		{"size half", `{"size": {"shortest_edge": 1}}`, Kwargs{}, true},
		{"size not object", `{"size": 5}`, Kwargs{}, true},
		{"long value", `{"max_pixels": "ééééééééééééééééééééééééééééééééééééééééééé"}`, Kwargs{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseKwargs([]byte(tc.raw))
			if tc.wantErr {
				var e *Error
				if !errors.As(err, &e) || e.Kind != InvalidKwargs {
					t.Fatalf("want an InvalidKwargs error, got %+v, %v", got, err)
				}
				if !utf8.ValidString(e.Message) || len(e.Message) > 120 {
					t.Fatalf("message %q", e.Message)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !kwargsEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}

	server := Kwargs{MinPixels: i(1), MaxPixels: i(2), UseFast: b(false)}
	req := Kwargs{MaxPixels: i(3)}
	if got := req.Over(server); !kwargsEqual(got, Kwargs{MinPixels: i(1), MaxPixels: i(3), UseFast: b(false)}) {
		t.Errorf("Over: %+v", got)
	}
	if lo, hi := (Kwargs{Size: &SizeBounds{5, 6}, MaxPixels: i(7)}).pixelBounds(1, 2); lo != 5 || hi != 7 {
		t.Errorf("pixelBounds %d %d", lo, hi)
	}
}

func kwargsEqual(a, b Kwargs) bool {
	eqI := func(x, y *int) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	eqB := func(x, y *bool) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	eqS := func(x, y *SizeBounds) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return eqI(a.MinPixels, b.MinPixels) && eqI(a.MaxPixels, b.MaxPixels) && eqB(a.UseFast, b.UseFast) && eqS(a.Size, b.Size)
}

func TestNewRejects(t *testing.T) {
	for _, tc := range []struct{ name, config string }{
		{"not json", `{`},
		{"unknown processor", `{"image_processor_type": "CLIPImageProcessor"}`},
		{"bilinear", `{"image_processor_type": "Qwen2VLImageProcessor", "resample": 2}`},
		{"two means", `{"image_processor_type": "Qwen2VLImageProcessor", "image_mean": [0.5, 0.5]}`},
		{"zero std", `{"image_processor_type": "Qwen2VLImageProcessor", "image_std": [0.5, 0, 0.5]}`},
		{"zero patch", `{"image_processor_type": "Qwen2VLImageProcessor", "patch_size": 0}`},
		{"half size", `{"image_processor_type": "Qwen2VLImageProcessor", "size": {"shortest_edge": 5}}`},
		{"no resize", `{"image_processor_type": "Qwen2VLImageProcessor", "do_resize": false}`},
		{"uint8 output", `{"image_processor_type": "Qwen2VLImageProcessor", "do_rescale": false, "do_normalize": false}`},
		{"bad rescale", `{"image_processor_type": "Qwen2VLImageProcessor", "rescale_factor": 0}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New([]byte(tc.config), BFloat16); err == nil {
				t.Fatal("accepted")
			}
		})
	}
	if _, err := New([]byte(qwen25Config), DType(0)); err == nil {
		t.Fatal("accepted dtype 0")
	}
}

func TestProcessRejectsMalformedRGB(t *testing.T) {
	q := mustNew(t, qwen25Config, BFloat16)
	for _, img := range []imaging.RGB{{Width: 2, Height: 2, Pix: make([]uint8, 11)}, {}, {Width: -1, Height: 3}} {
		_, err := q.Process(nil, img, Kwargs{})
		var e *Error
		if !errors.As(err, &e) || e.Kind != InvalidImage {
			t.Errorf("%dx%d/%d bytes: %v", img.Width, img.Height, len(img.Pix), err)
		}
	}
}

func TestDTypes(t *testing.T) {
	for _, tc := range []struct {
		f    float32
		bf16 uint16
		f16  uint16
	}{
		{1, 0x3f80, 0x3c00},
		{-2, 0xc000, 0xc000},
		{0, 0, 0},
		{65504, 0x4780, 0x7bff},
		{65520, 0x4780, 0x7c00}, // f16 rounds to infinity
		{float32(math.Inf(-1)), 0xff80, 0xfc00},
		{math.Float32frombits(0x3f808000), 0x3f80, 0x3c04}, // bf16 tie to even (down)
		{math.Float32frombits(0x3f818000), 0x3f82, 0x3c0c}, // bf16 tie to even (up)
		{math.Float32frombits(0x33800000), 0x3380, 0x0001}, // 2^-24, the smallest f16 subnormal
		{math.Float32frombits(0x33000000), 0x3300, 0x0000}, // 2^-25 ties to even zero
		{math.Float32frombits(0x387fc000), 0x3880, 0x03ff}, // largest f16 subnormal
		{float32(math.NaN()), 0x7fc0, 0x7e00},
	} {
		if got := bf16Bits(tc.f); got != tc.bf16 {
			t.Errorf("bf16(%g) = %#04x, want %#04x", tc.f, got, tc.bf16)
		}
		if got := f16Bits(tc.f); got != tc.f16 {
			t.Errorf("f16(%g) = %#04x, want %#04x", tc.f, got, tc.f16)
		}
	}
	for _, name := range []string{"bfloat16", "float16", "half", "float32", "float"} {
		d, err := ParseDType(name)
		if err != nil || (d.String() != name && name != "half" && name != "float") {
			t.Errorf("ParseDType(%q) = %v, %v", name, d, err)
		}
	}
	if _, err := ParseDType("int8"); err == nil {
		t.Error("ParseDType(int8) accepted")
	}
}

// plainPixelValues is the processor written as Hugging Face writes it, for the differential test:
// resize, normalise every value with the float32 formula, build the [T, C, H, W] frames and apply the
// 10-dimensional view/permute/reshape by index arithmetic.
func plainPixelValues(q *qwen2VL, img imaging.RGB, fast bool, plan Plan) []float32 {
	pix := img.Pix
	h, w := plan.ResizedHeight, plan.ResizedWidth
	if w != img.Width || h != img.Height {
		pix = make([]uint8, w*h*3)
		m := resize.Torch
		if !fast {
			m = resize.Pillow
		}
		var r resize.Resizer
		if err := r.RGB(pix, w, h, img.Pix, img.Width, img.Height, m); err != nil {
			panic(err)
		}
	}
	mean := [3]float64{0.48145466, 0.4578275, 0.40821073}
	std := [3]float64{0.26862954, 0.26130258, 0.27577711}
	norm := func(c int, v uint8) float32 {
		if fast {
			return (float32(v) - float32(mean[c])*255) / (float32(std[c]) * 255)
		}
		return (float32(float64(v)*(1.0/255)) - float32(mean[c])) / float32(std[c])
	}
	P, M, T := q.patch, q.merge, q.temporal
	gh, gw := h/P, w/P
	cols := 3 * T * P * P
	out := make([]float32, gh*gw*cols)
	// Index order after permute(0,1,4,7,5,8,3,2,6,9): (t, hb, wb, hi, wi, c, tp, py, px).
	for hb := range gh / M {
		for wb := range gw / M {
			for hi := range M {
				for wi := range M {
					row := ((hb*(gw/M)+wb)*M+hi)*M + wi
					for c := range 3 {
						for tp := range T {
							for py := range P {
								for px := range P {
									y, x := (hb*M+hi)*P+py, (wb*M+wi)*P+px
									col := ((c*T+tp)*P+py)*P + px
									out[row*cols+col] = norm(c, pix[(y*w+x)*3+c])
								}
							}
						}
					}
				}
			}
		}
	}
	return out
}

// TestPatchifyMatchesPlain proves the fused table-driven pass against the plain formula for every
// dtype and both backends on random images, including sizes that need no resize.
func TestPatchifyMatchesPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	sizes := [][2]int{{56, 56}, {56, 84}, {8, 8}, {97, 33}, {28, 280}, {200, 150}}
	for range 6 {
		sizes = append(sizes, [2]int{1 + rng.IntN(150), 1 + rng.IntN(150)})
	}
	// An odd patch size exercises the pair-wise store's last value; temporal 3 the frame copies.
	const oddPatch = `{"image_processor_type": "Qwen2VLImageProcessor", "patch_size": 7, "temporal_patch_size": 3,
		"merge_size": 2, "min_pixels": 3136, "max_pixels": 12845056}`
	for _, d := range []DType{Float32, BFloat16, Float16} {
		for _, config := range []string{qwen25Config, oddPatch} {
			testPatchify(t, mustNew(t, config, d), rng, sizes)
		}
	}
}

// testPatchify compares q's output with plainPixelValues on random images of the given sizes.
func testPatchify(t *testing.T, q *qwen2VL, rng *rand.Rand, sizes [][2]int) {
	t.Helper()
	d := q.dtype
	for _, sz := range sizes {
		img := imaging.RGB{Width: sz[0], Height: sz[1], Pix: make([]uint8, sz[0]*sz[1]*3)}
		for i := range img.Pix {
			img.Pix[i] = uint8(rng.IntN(256))
		}
		for _, fast := range []bool{true, false} {
			res, err := q.Process(nil, img, Kwargs{UseFast: &fast})
			if err != nil {
				t.Fatal(err)
			}
			want := plainPixelValues(q, img, fast, res.Plan)
			enc := make([]byte, 0, len(want)*d.Size())
			for _, v := range want {
				b := d.bits(v)
				enc = append(enc, byte(b), byte(b>>8))
				if d == Float32 {
					enc = append(enc, byte(b>>16), byte(b>>24))
				}
			}
			if !bytes.Equal(res.PixelValues.Data, enc) {
				t.Fatalf("%v %dx%d fast=%v: fused pass differs from the plain one", d, sz[0], sz[1], fast)
			}
			if !bytes.Equal(processTo(t, q, img, Kwargs{UseFast: &fast}).PixelValues.Data, enc) {
				t.Fatalf("%v %dx%d fast=%v: ProcessTo differs from the plain pass", d, sz[0], sz[1], fast)
			}
			if rows, cols := res.PixelValues.Shape[0], res.PixelValues.Shape[1]; rows != res.GridTHW[1]*res.GridTHW[2] || cols != 3*q.temporal*q.patch*q.patch {
				t.Fatalf("shape %v for grid %v", res.PixelValues.Shape, res.GridTHW)
			}
		}
	}
}

// TestProcessConcurrent shares one processor between goroutines, as the server does.
func TestProcessConcurrent(t *testing.T) {
	q := mustNew(t, qwen3Config, BFloat16)
	rng := rand.New(rand.NewPCG(7, 8))
	imgs := make([]imaging.RGB, 4)
	want := make([][]byte, len(imgs))
	for i := range imgs {
		w, h := 50+rng.IntN(200), 50+rng.IntN(200)
		imgs[i] = imaging.RGB{Width: w, Height: h, Pix: make([]uint8, w*h*3)}
		for j := range imgs[i].Pix {
			imgs[i].Pix[j] = uint8(rng.IntN(256))
		}
		r, err := q.Process(nil, imgs[i], Kwargs{})
		if err != nil {
			t.Fatal(err)
		}
		want[i] = r.PixelValues.Data
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for k := range 8 {
				i := (g + k) % len(imgs)
				r, err := q.Process(nil, imgs[i], Kwargs{})
				if err != nil || !slices.Equal(r.PixelValues.Data, want[i]) {
					t.Errorf("goroutine %d image %d: %v", g, i, err)
				}
			}
		})
	}
	wg.Wait()
}

// TestProcessAcrossGC: the processor's resize tables, kept while garbage collections drop its pooled
// scratch, give the bytes a new processor computes, for sizes and backends alternating over rounds.
func TestProcessAcrossGC(t *testing.T) {
	q := mustNew(t, qwen25Config, BFloat16)
	rng := rand.New(rand.NewPCG(9, 10))
	sizes := [][2]int{{640, 480}, {97, 203}, {640, 480}, {300, 120}}
	for round := range 3 {
		for _, sz := range sizes {
			img := imaging.RGB{Width: sz[0], Height: sz[1], Pix: make([]uint8, sz[0]*sz[1]*3)}
			for j := range img.Pix {
				img.Pix[j] = uint8(rng.IntN(256))
			}
			for _, fast := range []bool{true, false} {
				kw := Kwargs{UseFast: &fast}
				want, err := mustNew(t, qwen25Config, BFloat16).Process(nil, img, kw)
				if err != nil {
					t.Fatal(err)
				}
				got, err := q.Process(nil, img, kw)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.PixelValues.Data, want.PixelValues.Data) {
					t.Fatalf("round %d %v fast %v: pixel values differ from a new processor's", round, sz, fast)
				}
			}
		}
		runtime.GC() // twice: the pool's victim cache survives one
		runtime.GC()
	}
}

// TestPatchRowMatchesLookup: the vector kernel New picks writes the table lookups' bytes (on amd64,
// TestPatchKernelsMatchLookup holds every kernel the CPU runs to the same). Where the CPU has AVX2 the
// default bfloat16 configuration must get both kernels: a verification that silently failed would
// leave the fast path unused.
func TestPatchRowMatchesLookup(t *testing.T) {
	q := mustNew(t, qwen25Config, BFloat16)
	if q.fastKernel == nil || q.slowKernel == nil {
		if cpu.X86.HasAVX2 && runtime.GOARCH == "amd64" {
			t.Fatalf("AVX2 but no vector patch kernel (fast %v, slow %v)", q.fastKernel != nil, q.slowKernel != nil)
		}
		t.Skip("no vector patch kernel on this CPU: the table lookups run alone")
	}
	patchifyMatchesLookup(t, q, "")
}

// patchifyMatchesLookup: q's kernels write the table lookups' bytes for patch sizes around the kernels'
// steps (eight and sixteen pixels, with their overlapping or masked last steps), every merge and
// temporal size and both backends, with every level occurring; label names q's kernels in failures.
func patchifyMatchesLookup(t *testing.T, q *qwen2VL, label string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range 200 {
		q.patch, q.merge, q.temporal = 1+rng.IntN(40), 1+rng.IntN(3), 1+rng.IntN(3)
		levels, kernel := &q.fast, q.fastKernel
		if i%2 == 1 {
			levels, kernel = &q.slow, q.slowKernel
		}
		f := q.patch * q.merge
		w, h := f*(1+rng.IntN(4)), f*(1+rng.IntN(3))
		pix := make([]uint8, w*h*3)
		for j := range pix {
			pix[j] = uint8(rng.IntN(256))
		}
		n := (w / q.patch) * (h / q.patch) * 3 * q.temporal * q.patch * q.patch * 2
		got, want := make([]byte, n), make([]byte, n)
		q.patchify(patchSink{dst: got}, pix, w, levels, kernel)
		q.patchify(patchSink{dst: want}, pix, w, levels, nil)
		if !bytes.Equal(got, want) {
			t.Fatalf("%spatch %d merge %d temporal %d, %dx%d: the vector kernel differs from the lookups", label, q.patch, q.merge, q.temporal, w, h)
		}
		var streamed bytes.Buffer
		if err := q.patchify(patchSink{w: &streamed}, pix, w, levels, kernel); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(streamed.Bytes(), want) {
			t.Fatalf("%spatch %d merge %d temporal %d, %dx%d: the streamed patches differ from the lookups", label, q.patch, q.merge, q.temporal, w, h)
		}
	}
}

// TestLevelKernelProven: arithmetic that misses a single table entry gets no kernel, nor do the
// dtypes and shapes the kernel does not compute.
func TestLevelKernelProven(t *testing.T) {
	n := normalization{doRescale: true, doNormalize: true, rescale: 1.0 / 255, mean: [3]float64{0.5, 0.5, 0.5}, std: [3]float64{0.5, 0.5, 0.5}}
	fast := torchvisionLevels(n, BFloat16)
	a := torchvisionAffine(n)
	if newLevelKernel(a, &fast, BFloat16) == nil && cpu.X86.HasAVX2 && runtime.GOARCH == "amd64" {
		t.Fatal("no kernel for the table's own arithmetic")
	}
	off := fast
	off[2][200]++ // one level of one channel
	if newLevelKernel(a, &off, BFloat16) != nil {
		t.Fatal("a kernel for a table it does not reproduce")
	}
	half := torchvisionLevels(n, Float16)
	if newLevelKernel(torchvisionAffine(n), &half, Float16) != nil {
		t.Fatal("a kernel for float16, which it does not round to")
	}
	n.doNormalize = false
	rescaled := torchvisionLevels(n, BFloat16)
	if newLevelKernel(torchvisionAffine(n), &rescaled, BFloat16) != nil {
		t.Fatal("a kernel for torchvision's float32 rescale alone")
	}
}

// failingWriter accepts n bytes, then fails.
type failingWriter struct{ n int }

var errWriterFull = errors.New("writer full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, errWriterFull
	}
	w.n -= len(p)
	return len(p), nil
}

// TestProcessToStopsOnWriteError: the writer's error ends the work and is returned as it is, whether
// it fails on the first chunk, a middle one or the last.
func TestProcessToStopsOnWriteError(t *testing.T) {
	q := mustNew(t, qwen25Config, BFloat16)
	img := benchImage(640, 480)
	total := processTo(t, q, img, Kwargs{}).PixelValues.Data
	for _, n := range []int{0, sinkChunk, len(total) - 1} {
		res, err := q.ProcessTo(&failingWriter{n: n}, img, Kwargs{})
		if !errors.Is(err, errWriterFull) || res != nil {
			t.Fatalf("writer failing after %d bytes: %v, %v", n, res, err)
		}
	}
}

// TestPreparedOwnsItsPixels: a Prepared keeps its resized pixels while the
// processor goes on with other images (whose resizes reuse pooled
// buffers, which a Prepared's never are), and a writer's error stops its
// patches and is returned.
func TestPreparedOwnsItsPixels(t *testing.T) {
	q := mustNew(t, qwen25Config, BFloat16)
	a, b := benchImage(640, 480), benchImage(641, 479)
	prep, err := q.Prepare(a, Kwargs{})
	if err != nil {
		t.Fatal(err)
	}
	want := processTo(t, q, a, Kwargs{}).PixelValues.Data
	for range 3 {
		processTo(t, q, b, Kwargs{})
	}
	var got bytes.Buffer
	if _, err := prep.WriteTo(&got); err != nil || !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("the Prepared's pixel values changed with later images (%v)", err)
	}
	for _, n := range []int{0, sinkChunk, len(want) - 1} {
		if w, err := prep.WriteTo(&failingWriter{n: n}); !errors.Is(err, errWriterFull) || w > int64(n) {
			t.Fatalf("writer failing after %d bytes: wrote %d, %v", n, w, err)
		}
	}
}
