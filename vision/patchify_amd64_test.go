package vision

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestLevelKernelModes: both of the kernel's modes, run on real patches of every temporal size,
// write the table lookups' bytes wherever their 768-level proof holds; the exact mode must hold for the default CLIP
// statistics of both backends (it is their own arithmetic), and the affine one, where it holds, is the
// one New picks.
func TestLevelKernelModes(t *testing.T) {
	if !cpu.X86.HasAVX2 {
		t.Skip("no AVX2: the table lookups run alone")
	}
	n := normalization{doRescale: true, doNormalize: true, rescale: 1.0 / 255}
	copy(n.mean[:], clipMean)
	copy(n.std[:], clipStd)
	q := mustNew(t, qwen25Config, BFloat16)
	rng := rand.New(rand.NewPCG(9, 9))
	for _, backend := range []struct {
		name   string
		a      levelAffine
		levels *[3]levelTable
		chosen *levelKernel
	}{{"torchvision", torchvisionAffine(n), &q.fast, q.fastKernel}, {"pil", pilAffine(n), &q.slow, q.slowKernel}} {
		affine, exact := levelKernels(backend.a)
		if !exact.writes(backend.levels) {
			t.Fatalf("%s: the exact mode misses the table", backend.name)
		}
		want := exact
		if affine.writes(backend.levels) {
			want = affine
		}
		if backend.chosen == nil || backend.chosen.affine != want.affine {
			t.Fatalf("%s: New picked %+v, want the affine mode %v", backend.name, backend.chosen, want.affine)
		}
		t.Logf("%s: affine mode proven %v", backend.name, want.affine)
		for _, k := range []*levelKernel{affine, exact} {
			if !k.writes(backend.levels) {
				continue
			}
			// Every temporal_patch_size the kernel's second-frame store meets: none, the
			// second frame alone, and copies after it.
			for _, pt := range [][2]int{{8, 2}, {14, 1}, {14, 2}, {14, 3}, {16, 2}, {23, 3}} {
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
					t.Fatalf("%s affine=%v patch %d temporal %d: differs from the lookups", backend.name, k.affine, p, q.temporal)
				}
				for _, kk := range []*levelKernel{k, nil} {
					var streamed bytes.Buffer
					if err := q.patchify(patchSink{w: &streamed}, pix, w, backend.levels, kk); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(streamed.Bytes(), lut) {
						t.Fatalf("%s affine=%v patch %d temporal %d kernel %v: streamed patches differ from the lookups", backend.name, k.affine, p, q.temporal, kk != nil)
					}
				}
			}
		}
	}
}
