package resize

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// pillowResizeScript reads (srcW, srcH, dstW, dstH, pixels) records from argv[1] and writes each
// Image.resize((dstW, dstH), BICUBIC) result to argv[2], the reference for TestPillowLive.
const pillowResizeScript = `
import struct, sys
from PIL import Image
src = open(sys.argv[1], "rb").read()
out = open(sys.argv[2], "wb")
off = 0
while off < len(src):
    sw, sh, dw, dh = struct.unpack_from("<4I", src, off)
    off += 16
    n = sw * sh * 3
    im = Image.frombytes("RGB", (sw, sh), src[off:off + n])
    off += n
    out.write(im.resize((dw, dh), Image.BICUBIC).tobytes())
out.close()
`

type sizeCase struct{ sw, sh, dw, dh int }

// liveCases covers up- and down-scaling on each axis, one-pixel edges, one axis unchanged, strong
// reductions (wide kernels) and odd ratios.
func liveCases(rng *rand.Rand) []sizeCase {
	cases := []sizeCase{
		{1, 1, 1, 1}, {1, 1, 7, 5}, {5, 7, 1, 1}, {1, 9, 1, 4}, {9, 1, 4, 1}, {1, 50, 3, 3},
		{56, 30, 56, 84}, {30, 56, 84, 56}, {8, 8, 56, 56}, {28, 28, 56, 56}, {300, 200, 308, 196},
		{160, 120, 168, 112}, {640, 480, 644, 476}, {333, 517, 336, 504}, {2000, 40, 1988, 28},
		{40, 2000, 28, 1988}, {1280, 720, 1280, 704}, {1275, 1650, 1288, 1652}, {400, 300, 97, 13},
		{1000, 3, 10, 3}, {3, 1000, 3, 9}, {17, 19, 16, 18}, {16, 18, 17, 19}, {255, 255, 256, 256},
		{512, 384, 504, 392}, {2, 2, 3, 3}, {3, 3, 2, 2}, {100, 100, 1, 100}, {100, 100, 100, 1},
	}
	for range 60 {
		sw, sh := 1+rng.IntN(300), 1+rng.IntN(300)
		dw, dh := 1+rng.IntN(300), 1+rng.IntN(300)
		cases = append(cases, sizeCase{sw, sh, dw, dh})
	}
	return cases
}

// testImage is noise over gradients with hard edges: the mix that exercises negative lobes and
// clamping at both ends.
func testImage(rng *rand.Rand, w, h int) []uint8 {
	pix := make([]uint8, w*h*3)
	mode := rng.IntN(3)
	for y := range h {
		for x := range w {
			for c := range 3 {
				var v int
				switch mode {
				case 0:
					v = rng.IntN(256)
				case 1:
					v = (x*255/max(w, 1) + y*97/max(h, 1) + c*60) % 256
					if rng.IntN(8) == 0 {
						v = 255 * rng.IntN(2)
					}
				default:
					if (x/3+y/5)%2 == 0 {
						v = 255
					}
				}
				pix[(y*w+x)*3+c] = uint8(v)
			}
		}
	}
	return pix
}

func TestPillowLive(t *testing.T) {
	py := testenv.PillowPython(t)
	rng := rand.New(rand.NewPCG(1, 2))
	cases := liveCases(rng)
	var in bytes.Buffer
	srcs := make([][]uint8, len(cases))
	for i, c := range cases {
		srcs[i] = testImage(rng, c.sw, c.sh)
		for _, v := range []int{c.sw, c.sh, c.dw, c.dh} {
			_ = binary.Write(&in, binary.LittleEndian, uint32(v))
		}
		in.Write(srcs[i])
	}
	dir := t.TempDir()
	inPath, outPath := filepath.Join(dir, "in.bin"), filepath.Join(dir, "out.bin")
	if err := os.WriteFile(inPath, in.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(py, "-c", pillowResizeScript, inPath, outPath).CombinedOutput(); err != nil {
		t.Fatalf("reference Pillow resize: %v\n%s", err, out)
	}
	want, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	var r Resizer
	off := 0
	for i, c := range cases {
		n := c.dw * c.dh * 3
		if off+n > len(want) {
			t.Fatalf("reference output short at case %d", i)
		}
		got := make([]uint8, n)
		if err := r.RGB(got, c.dw, c.dh, srcs[i], c.sw, c.sh, Pillow); err != nil {
			t.Fatalf("%dx%d->%dx%d: %v", c.sw, c.sh, c.dw, c.dh, err)
		}
		if d := firstDiff(got, want[off:off+n]); d >= 0 {
			t.Errorf("%dx%d -> %dx%d: byte %d (pixel %d, channel %d) = %d, Pillow %d", c.sw, c.sh, c.dw, c.dh,
				d, d/3, d%3, got[d], want[off+d])
		}
		off += n
	}
	if off != len(want) {
		t.Fatalf("reference wrote %d bytes, cases need %d", len(want), off)
	}
}

func firstDiff(a, b []uint8) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// TestMethodsAgreeClosely is a sanity bound, not an exactness proof (that is the goldens' job):
// torch's int16 weights move a pixel by at most a couple of levels from Pillow's.
func TestMethodsAgreeClosely(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var r Resizer
	for _, c := range liveCases(rng) {
		if c.sw*c.sh > 400*400 || c.dw*c.dh > 400*400 {
			continue // a sanity bound needs no large images
		}
		src := testImage(rng, c.sw, c.sh)
		p := make([]uint8, c.dw*c.dh*3)
		q := make([]uint8, len(p))
		if err := r.RGB(p, c.dw, c.dh, src, c.sw, c.sh, Pillow); err != nil {
			t.Fatal(err)
		}
		if err := r.RGB(q, c.dw, c.dh, src, c.sw, c.sh, Torch); err != nil {
			t.Fatal(err)
		}
		for i := range p {
			if d := int(p[i]) - int(q[i]); d > 3 || d < -3 {
				t.Fatalf("%v: pixel byte %d differs by %d", c, i, d)
			}
		}
	}
}

func TestRGBErrors(t *testing.T) {
	var r Resizer
	for _, tc := range []struct {
		name           string
		dst, src       int
		dw, dh, sw, sh int
		m              Method
	}{
		{"zero source", 3, 0, 1, 1, 0, 1, Pillow},
		{"negative target", 3, 3, -1, 1, 1, 1, Torch},
		{"short dst", 2, 3, 1, 1, 1, 1, Pillow},
		{"long src", 3, 6, 1, 1, 1, 1, Pillow},
		{"unknown method", 3, 3, 1, 1, 1, 1, Method(9)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := r.RGB(make([]uint8, tc.dst), tc.dw, tc.dh, make([]uint8, tc.src), tc.sw, tc.sh, tc.m)
			if err == nil {
				t.Fatal("no error")
			}
		})
	}
	if got := fmt.Sprint(Pillow, Torch); got != "pillow torch" {
		t.Errorf("method names %q", got)
	}
}
