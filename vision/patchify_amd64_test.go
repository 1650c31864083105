package vision

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// kernelISA is one instruction set a patch kernel runs on, when the CPU has it.
type kernelISA struct {
	name   string
	avx512 bool
}

// cpuISAs are the kernels' instruction sets this CPU runs: tests force each in turn, whatever
// newLevelKernel would pick.
func cpuISAs() []kernelISA {
	var isas []kernelISA
	if hasAVX2 {
		isas = append(isas, kernelISA{"avx2", false})
	}
	if hasAVX512 {
		isas = append(isas, kernelISA{"avx512", true})
	}
	return isas
}

// on is k's arithmetic proven on the other instruction set, or nil.
func (k *levelKernel) on(isa kernelISA, t *[3]levelTable) *levelKernel {
	if k == nil {
		return nil
	}
	return provenKernel(k.from, t, isa.avx512)
}

// forced returns a copy of q whose patches are computed by the kernels of isa (nil: the table lookups
// alone), failing the test where either backend's arithmetic is not proven there.
func forced(t testing.TB, q *qwen2VL, isa *kernelISA) *qwen2VL {
	t.Helper()
	f := &qwen2VL{patch: q.patch, temporal: q.temporal, merge: q.merge, minPixels: q.minPixels, maxPixels: q.maxPixels,
		dtype: q.dtype, fast: q.fast, slow: q.slow}
	if isa == nil || q.dtype != BFloat16 {
		return f
	}
	f.fastKernel, f.slowKernel = q.fastKernel.on(*isa, &q.fast), q.slowKernel.on(*isa, &q.slow)
	if f.fastKernel == nil || f.slowKernel == nil {
		t.Fatalf("%s: no proven kernel (fast %v, slow %v)", isa.name, f.fastKernel != nil, f.slowKernel != nil)
	}
	return f
}

// TestNewLevelKernelPrefersAVX512: where the CPU has AVX-512, the default statistics of both shared
// models get the AVX-512 kernel for both backends; a proof that silently failed would leave it unused.
func TestNewLevelKernelPrefersAVX512(t *testing.T) {
	if !hasAVX512 {
		t.Skip("no AVX-512 (F, BW, VL, VBMI, BF16, BMI2)")
	}
	for _, cfg := range []string{qwen25Config, qwen3Config} {
		q := mustNew(t, cfg, BFloat16)
		if q.fastKernel == nil || !q.fastKernel.avx512 || q.slowKernel == nil || !q.slowKernel.avx512 {
			t.Fatalf("kernels %+v %+v, want AVX-512 ones", q.fastKernel, q.slowKernel)
		}
	}
}

// TestLevelKernelDenormals: statistics under which a level normalises to a denormal float32 (level
// 100 with a mean one ulp above it and a huge std) round it differently in VCVTNEPS2BF16, which
// flushes it to zero, and bf16Bits, which keeps it; the AVX-512 kernel's proof must fail there and
// New fall back to the AVX2 kernel.
func TestLevelKernelDenormals(t *testing.T) {
	if !hasAVX512 || !hasAVX2 {
		t.Skip("needs AVX-512 and AVX2")
	}
	n := normalization{doNormalize: true, mean: [3]float64{0.5, float64(math.Nextafter32(100, 101)), 0.5}, std: [3]float64{0.5, 1e35, 0.5}}
	levels := pilLevels(n, BFloat16)
	if levels[1][100] != 0x8001 {
		t.Fatalf("level 100 is %#x, want the denormal's 0x8001", levels[1][100])
	}
	if k := provenKernel(pilAffine(n), &levels, true); k != nil {
		t.Fatalf("AVX-512 kernel %+v proven for a denormal it flushes", k)
	}
	if k := newLevelKernel(pilAffine(n), &levels, BFloat16); k == nil || k.avx512 {
		t.Fatalf("New picked %+v, want the AVX2 kernel", k)
	}
}

// TestLevelKernelModes: both of the kernel's modes, on every instruction set, run on real patches of
// every temporal size, write the table lookups' bytes wherever their 768-level proof holds; the exact
// mode must hold for the default CLIP statistics of both backends (it is their own arithmetic), and
// the affine one, where it holds, is the one New picks.
func TestLevelKernelModes(t *testing.T) {
	if len(cpuISAs()) == 0 {
		t.Skip("no AVX2: the table lookups run alone")
	}
	n := normalization{doRescale: true, doNormalize: true, rescale: 1.0 / 255}
	copy(n.mean[:], clipMean)
	copy(n.std[:], clipStd)
	q := mustNew(t, qwen25Config, BFloat16)
	rng := rand.New(rand.NewPCG(9, 9))
	for _, isa := range cpuISAs() {
		for _, backend := range []struct {
			name   string
			a      levelAffine
			levels *[3]levelTable
			chosen *levelKernel
		}{{"torchvision", torchvisionAffine(n), &q.fast, q.fastKernel}, {"pil", pilAffine(n), &q.slow, q.slowKernel}} {
			affine, exact := levelKernels(backend.a, isa.avx512)
			if !exact.writes(backend.levels) {
				t.Fatalf("%s %s: the exact mode misses the table", isa.name, backend.name)
			}
			want := exact
			if affine.writes(backend.levels) {
				want = affine
			}
			if got := backend.chosen.on(isa, backend.levels); got == nil || got.affine != want.affine {
				t.Fatalf("%s %s: New's arithmetic proves as %+v, want the affine mode %v", isa.name, backend.name, got, want.affine)
			}
			t.Logf("%s %s: affine mode proven %v", isa.name, backend.name, want.affine)
			for _, k := range []*levelKernel{affine, exact} {
				if !k.writes(backend.levels) {
					continue
				}
				// Every temporal_patch_size the kernel's second-frame store meets: none, the
				// second frame alone, and copies after it.
				for _, pt := range [][2]int{{8, 2}, {14, 1}, {14, 2}, {14, 3}, {16, 2}, {17, 2}, {23, 3}, {32, 2}, {33, 1}} {
					p := pt[0]
					q.patch, q.temporal = p, pt[1]
					w, h := 4*p, 2*p
					pix := make([]uint8, w*h*3)
					for j := range pix {
						pix[j] = uint8(rng.IntN(256))
					}
					size := (w / p) * (h / p) * 3 * q.temporal * p * p * 2
					got, lut := make([]byte, size), make([]byte, size)
					q.patchify(patchSink{dst: got}, pix, w, backend.levels, k)
					q.patchify(patchSink{dst: lut}, pix, w, backend.levels, nil)
					if !bytes.Equal(got, lut) {
						t.Fatalf("%s %s affine=%v patch %d temporal %d: differs from the lookups", isa.name, backend.name, k.affine, p, q.temporal)
					}
					for _, kk := range []*levelKernel{k, nil} {
						var streamed bytes.Buffer
						if err := q.patchify(patchSink{w: &streamed}, pix, w, backend.levels, kk); err != nil {
							t.Fatal(err)
						}
						if !bytes.Equal(streamed.Bytes(), lut) {
							t.Fatalf("%s %s affine=%v patch %d temporal %d kernel %v: streamed patches differ from the lookups", isa.name, backend.name, k.affine, p, q.temporal, kk != nil)
						}
					}
				}
			}
		}
	}
}

// TestPatchKernelsMatchLookup is TestPatchRowMatchesLookup on every instruction set this CPU has.
func TestPatchKernelsMatchLookup(t *testing.T) {
	base := mustNew(t, qwen25Config, BFloat16)
	for _, isa := range cpuISAs() {
		patchifyMatchesLookup(t, forced(t, base, &isa), isa.name+": ")
	}
}

// TestPatchKernelEdges runs each kernel, in each mode its proof holds, directly on every width from 1
// to 70 (whole sixteen- and eight-pixel steps and every tail), with the source rows ending at an
// inaccessible page and guard bytes around the output: the values are the lookups', and nothing
// outside the rows is read or written. The AVX2 kernel is held to its eight-pixel minimum.
func TestPatchKernelEdges(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	eachProvenKernel(t, func(isa kernelISA, k *levelKernel, levels *[3]levelTable) {
		kernelEdges(t, isa, k, levels, rng)
	})
}

// eachProvenKernel calls f with each kernel on each instruction set this CPU has, in each mode whose
// proof holds for either backend's tables of the default configuration.
func eachProvenKernel(t *testing.T, f func(isa kernelISA, k *levelKernel, levels *[3]levelTable)) {
	t.Helper()
	q := mustNew(t, qwen25Config, BFloat16)
	for _, isa := range cpuISAs() {
		for _, backend := range []struct {
			levels *[3]levelTable
			k      *levelKernel
		}{{&q.fast, q.fastKernel}, {&q.slow, q.slowKernel}} {
			affine, exact := levelKernels(backend.k.from, isa.avx512)
			for _, k := range []*levelKernel{affine, exact} {
				if k.writes(backend.levels) {
					f(isa, k, backend.levels)
				}
			}
		}
	}
}

// kernelEdges is TestPatchKernelEdges for one kernel.
func kernelEdges(t *testing.T, isa kernelISA, k *levelKernel, levels *[3]levelTable, rng *rand.Rand) {
	t.Helper()
	const guard = 64
	for width := 1; width <= 70; width++ {
		if !isa.avx512 && width < patchRowMin {
			continue
		}
		rows := 1 + rng.IntN(4)
		stride := 3*width + rng.IntN(7)
		src := testenv.GuardedPages(t, (rows-1)*stride+3*width)
		for j := range src {
			src[j] = uint8(rng.IntN(256))
		}
		for _, frame := range []int{0, 2 * width * rows} {
			channel := 2*width*rows + frame + rng.IntN(5)*2
			out := make([]byte, guard+2*channel+2*width*rows+frame+guard)
			for j := range out {
				out[j] = 0xa5
			}
			want := bytes.Clone(out)
			for r := range rows {
				lookupRow(want[guard+2*width*r:], channel, src[r*stride:r*stride+3*width], levels, 2)
				if frame > 0 {
					lookupRow(want[guard+frame+2*width*r:], channel, src[r*stride:r*stride+3*width], levels, 2)
				}
			}
			k.run(&out[guard], channel, &src[0], stride, width, rows, frame)
			if !bytes.Equal(out, want) {
				t.Fatalf("%s affine=%v width %d rows %d frame %d: output differs from the lookups", isa.name, k.affine, width, rows, frame)
			}
		}
	}
}

// TestPatchKernelWindows runs each kernel, in each mode its proof holds, on runs of merge windows
// (every count of windows, merge size and patch width the loops meet, with and without the second
// frame), the source ending at an inaccessible page and guard bytes around the output: patch after
// patch in window order, the lookups' values, nothing outside the patches written.
func TestPatchKernelWindows(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	eachProvenKernel(t, func(isa kernelISA, k *levelKernel, levels *[3]levelTable) {
		kernelWindows(t, isa, k, levels, rng)
	})
}

// kernelWindows is TestPatchKernelWindows for one kernel.
func kernelWindows(t *testing.T, isa kernelISA, k *levelKernel, levels *[3]levelTable, rng *rand.Rand) {
	t.Helper()
	const guard = 64
	for i := range 60 {
		P, M, wins := 1+rng.IntN(33), 1+rng.IntN(3), 1+rng.IntN(4)
		if !isa.avx512 {
			P = max(P, patchRowMin)
		}
		stride := 3*P*M*wins + rng.IntN(7)
		src := testenv.GuardedPages(t, (M*P-1)*stride+3*P*M*wins)
		for j := range src {
			src[j] = uint8(rng.IntN(256))
		}
		frame := 0
		if i%2 == 1 {
			frame = 2 * P * P
		}
		channel := 2*P*P + frame + rng.IntN(3)*2
		step := 3 * channel
		n := wins * M * M
		out := make([]byte, guard+(n-1)*step+2*channel+2*P*P+frame+guard)
		for j := range out {
			out[j] = 0xa5
		}
		want := bytes.Clone(out)
		for j := range n {
			win, hi, wi := j/(M*M), j/M%M, j%M
			base := hi*P*stride + (win*M+wi)*P*3
			for r := range P {
				row := src[base+r*stride : base+r*stride+3*P]
				lookupRow(want[guard+j*step+2*P*r:], channel, row, levels, 2)
				if frame > 0 {
					lookupRow(want[guard+j*step+frame+2*P*r:], channel, row, levels, 2)
				}
			}
		}
		k.runPatches(&out[guard], channel, &src[0], stride, P, P, frame, M, M, wins, step)
		if !bytes.Equal(out, want) {
			t.Fatalf("%s affine=%v patch %d merge %d windows %d frame %d: output differs from the lookups", isa.name, k.affine, P, M, wins, frame)
		}
	}
}

// TestHFGoldensEveryKernel holds the bfloat16 output of every path this CPU has — the table lookups
// alone, the AVX2 kernel, the AVX-512 kernel — to Hugging Face's processors on the whole corpus, into
// the whole tensor and streamed, whichever kernel New would pick. Each image is resized once and its
// pixels patchified by every path.
func TestHFGoldensEveryKernel(t *testing.T) {
	recs := readJSONL[hfRecord](t, filepath.Join(multimodalDir(t), "golden", "hf_processors.jsonl"))
	var files []string
	for _, r := range recs {
		files = append(files, r.File)
	}
	corpus := loadCorpus(t, files)
	checked := 0
	for _, model := range []string{"qwen2_5_vl", "qwen3_vl"} {
		base := modelProcessor(t, model, BFloat16).(*qwen2VL)
		paths := map[string]*qwen2VL{"lookups": forced(t, base, nil)}
		for _, isa := range cpuISAs() {
			paths[isa.name] = forced(t, base, &isa)
		}
		for _, r := range recs {
			c := corpus[r.File]
			if r.Model != model || r.LoadError != "" || c.err != nil {
				continue
			}
			for _, b := range []struct {
				fast bool
				g    *pixelGolden
			}{{true, r.Fast}, {false, r.Slow}} {
				if b.g == nil || b.g.Error != "" {
					continue
				}
				f, err := wholeFrame(c.img)
				if err != nil {
					t.Fatal(err)
				}
				err = base.resized(f, Kwargs{UseFast: &b.fast}, false, func(plan Plan, pix []uint8, levels *[3]levelTable, _ *levelKernel) error {
					for name, q := range paths {
						kernel := q.slowKernel
						if b.fast {
							kernel = q.fastKernel
						}
						data := make([]byte, q.pixelBytes(plan))
						q.patchify(patchSink{dst: data}, pix, plan.ResizedWidth, levels, kernel)
						var streamed bytes.Buffer
						if err := q.patchify(patchSink{w: &streamed}, pix, plan.ResizedWidth, levels, kernel); err != nil {
							return err
						}
						for _, out := range [][]byte{data, streamed.Bytes()} {
							if s := sha256.Sum256(out); hex.EncodeToString(s[:]) != b.g.SHA256BF16 {
								t.Errorf("%s %s %s fast=%v: bf16 differs from the golden", name, model, r.File, b.fast)
							}
						}
						checked++
					}
					return nil
				})
				if err != nil {
					t.Fatalf("%s %s: %v", model, r.File, err)
				}
			}
		}
	}
	if want := (1 + len(cpuISAs())) * 60; checked < want {
		t.Errorf("only %d outputs checked, want %d", checked, want)
	}
	t.Logf("%d outputs (path, model, image, backend) bit for bit", checked)
}

// BenchmarkPatchify is the patch pass alone on a 1280x720 image's resize (1288x728, 4784 patches of
// Qwen2.5-VL), into the whole tensor and streamed to a writer (the server's path), on every path.
func BenchmarkPatchify(b *testing.B) {
	base := mustNew(b, qwen25Config, BFloat16)
	img := benchImage(1288, 728)
	paths := []*kernelISA{nil}
	for _, isa := range cpuISAs() {
		paths = append(paths, &isa)
	}
	for _, isa := range paths {
		name := "lookups"
		if isa != nil {
			name = isa.name
		}
		q := forced(b, base, isa)
		out := make([]byte, q.pixelBytes(Plan{GridTHW: [3]int{1, 728 / 14, 1288 / 14}, Cols: 3 * 2 * 14 * 14}))
		for _, sink := range []struct {
			name string
			s    patchSink
		}{{"dst", patchSink{dst: out}}, {"to", patchSink{w: io.Discard}}} {
			b.Run(fmt.Sprintf("%s/%s", name, sink.name), func(b *testing.B) {
				b.SetBytes(int64(len(out)))
				cpu0 := testenv.CPUTime(b)
				for b.Loop() {
					if err := q.patchify(sink.s, img.Pix, 1288, &q.fast, q.fastKernel); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(testenv.CPUTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
