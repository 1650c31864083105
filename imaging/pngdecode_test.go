package imaging

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// pngStd is the path Load took before the fast decoder: image/png, then the conversion the header's
// mode picks.
func pngStd(data []byte, opt Options) (*RGB, error) {
	hd, err := pngHeader(data)
	if err != nil {
		return nil, err
	}
	if hd.mode == "RGB" {
		return decodePNGOpaque(data, opt)
	}
	return decodePNGStd(data, opt)
}

// checkPNGFast compares the fast decoder with image/png on one file: where the fast decoder gives
// pixels, image/png gives the same; Load gives what image/png gives, error text included. It reports
// whether the fast decoder took the file.
func checkPNGFast(t *testing.T, name string, data []byte, opt Options) bool {
	t.Helper()
	if hd, err := readHeader(data); err != nil || hd.format != PNG {
		return false
	}
	if err := checkPixels(int(binary.BigEndian.Uint32(data[16:])), int(binary.BigEndian.Uint32(data[20:])), opt); err != nil {
		return false
	}
	want, werr := pngStd(data, opt)
	fast := decodePNGFast(data, opt.Background)
	if fast != nil {
		if werr != nil {
			t.Fatalf("%s: the fast decoder gave pixels, image/png failed: %v", name, werr)
		}
		if fast.Width != want.Width || fast.Height != want.Height || !bytes.Equal(fast.Pix, want.Pix) {
			m, n := pixelDiff(fast.Pix, want.Pix)
			t.Fatalf("%s: fast %dx%d vs image/png %dx%d: %d pixels differ, by up to %d", name, fast.Width, fast.Height, want.Width, want.Height, n, m)
		}
	}
	got, gerr := Load(data, opt)
	switch {
	case (gerr == nil) != (werr == nil):
		t.Fatalf("%s: Load error %v, image/png path %v", name, gerr, werr)
	case gerr != nil && gerr.Error() != werr.Error():
		t.Fatalf("%s: Load error %q, image/png path %q", name, gerr, werr)
	case gerr == nil && !bytes.Equal(got.Pix, orient(want, mustHeader(t, data).orientation).Pix):
		t.Fatalf("%s: Load's pixels differ from the image/png path's", name)
	}
	return fast != nil
}

func mustHeader(t *testing.T, data []byte) header {
	h, err := pngHeader(data)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestPNGFastCorpus: every PNG of the shared corpus decodes through the fast path to image/png's pixels,
// on white and on a coloured background (the transparent files composite), and the broken ones fail as
// before.
func TestPNGFastCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testenv.SharedDir(t), "multimodal", "images", "*.png"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus PNGs: %v", err)
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(p)
		for _, bg := range [][3]uint8{{255, 255, 255}, {10, 200, 30}} {
			opt := Options{MaxPixels: DefaultMaxPixels, Background: bg}
			took := checkPNGFast(t, name, data, opt)
			if _, err := pngStd(data, opt); err == nil && !took {
				t.Errorf("%s: valid, but the fast decoder did not take it", name)
			}
		}
	}
}

// pngKind is one colour type and bit depth.
type pngKind struct{ ct, depth uint8 }

var pngKinds = []pngKind{
	{pngGray, 1}, {pngGray, 2}, {pngGray, 4}, {pngGray, 8}, {pngGray, 16},
	{pngRGB, 8}, {pngRGB, 16},
	{pngPalette, 1}, {pngPalette, 2}, {pngPalette, 4}, {pngPalette, 8},
	{pngGrayAlpha, 8}, {pngGrayAlpha, 16},
	{pngRGBA, 8}, {pngRGBA, 16},
}

// pngSpec describes a generated PNG.
type pngSpec struct {
	kind       pngKind
	w, h       int
	interlaced bool
	trns       bool // a tRNS chunk: a gray or RGB colour present in the image, or palette alphas
	shortPLTE  bool // a palette with fewer entries than the indices used (image/png: opaque black)
	idatSplit  int  // IDAT chunk size (0: one chunk)
	ancillary  bool // gAMA before and tEXt after the image data, and a trailing IDAT after tEXt
	seed       uint64
}

// pngChunk appends one chunk with its CRC.
func pngChunk(out []byte, typ string, body []byte) []byte {
	out = binary.BigEndian.AppendUint32(out, uint32(len(body)))
	start := len(out)
	out = append(out, typ...)
	out = append(out, body...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[start:]))
}

// paethRef is the spec's Paeth predictor as written in PNG 9.4, for the encoder side.
func paethRef(a, b, c int) int {
	p := a + b - c
	pa, pb, pc := p-a, p-b, p-c
	if pa < 0 {
		pa = -pa
	}
	if pb < 0 {
		pb = -pb
	}
	if pc < 0 {
		pc = -pc
	}
	if pa <= pb && pa <= pc {
		return a
	}
	if pb <= pc {
		return b
	}
	return c
}

// encodePNG writes s with random samples (runs of repeats, so the filters see both smooth and noisy
// data) and a random filter on each row.
func encodePNG(s pngSpec) []byte {
	rng := rand.New(rand.NewPCG(s.seed, 7))
	f := pngFile{width: s.w, height: s.h, depth: s.kind.depth, colorType: s.kind.ct}
	bits := f.bitsPerPixel()
	bpp := max(1, bits/8)
	rowBytes := func(pw int) int { return (bits*pw + 7) / 8 }
	// The unfiltered image, row by row at full size; passes sample it.
	full := make([][]byte, s.h)
	var last byte
	for y := range full {
		full[y] = make([]byte, rowBytes(s.w))
		for i := range full[y] {
			if rng.IntN(3) > 0 {
				last = byte(rng.Uint32())
			}
			full[y][i] = last
		}
	}
	npal := 1 << min(s.kind.depth, 8)
	if s.kind.ct == pngPalette && s.shortPLTE {
		npal = max(1, npal/2-1)
	}
	sample := func(x, y int) uint64 { // the bits of pixel (x, y)
		row := full[y]
		var v uint64
		for b := 0; b < bits; b++ {
			bit := x*bits + b
			v = v<<1 | uint64(row[bit/8]>>(7-bit%8)&1)
		}
		return v
	}
	var raw []byte
	passes := []pngPass{{0, 0, 1, 1}}
	if s.interlaced {
		passes = adam7[:]
	}
	for _, p := range passes {
		pw, ph := p.size(s.w, s.h)
		if pw == 0 || ph == 0 {
			continue
		}
		prev := make([]byte, rowBytes(pw))
		for y := 0; y < ph; y++ {
			cur := make([]byte, rowBytes(pw))
			for x := 0; x < pw; x++ {
				v := sample(p.x0+x*p.dx, p.y0+y*p.dy)
				for b := bits - 1; b >= 0; b-- {
					bit := x*bits + (bits - 1 - b)
					cur[bit/8] |= byte(v>>b&1) << (7 - bit%8)
				}
			}
			ft := byte(rng.IntN(5))
			raw = append(raw, ft)
			for i := range cur {
				var a, b, c int
				if i >= bpp {
					a, c = int(cur[i-bpp]), int(prev[i-bpp])
				}
				b = int(prev[i])
				pred := [...]int{0, a, b, (a + b) / 2, paethRef(a, b, c)}[ft]
				raw = append(raw, cur[i]-byte(pred))
			}
			prev = cur
		}
	}
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, rng.IntN(10))
	zw.Write(raw)
	zw.Close()

	out := []byte("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(s.w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(s.h))
	il := byte(0)
	if s.interlaced {
		il = 1
	}
	out = pngChunk(out, "IHDR", append(ihdr, s.kind.depth, s.kind.ct, 0, 0, il))
	if s.ancillary {
		out = pngChunk(out, "gAMA", []byte{0, 0, 0xb1, 0x8f})
	}
	if s.kind.ct == pngPalette {
		plte := make([]byte, 3*npal)
		for i := range plte {
			plte[i] = byte(rng.Uint32())
		}
		out = pngChunk(out, "PLTE", plte)
	}
	if s.trns {
		switch s.kind.ct {
		case pngGray: // the first pixel's sample, as 16 bits
			out = pngChunk(out, "tRNS", binary.BigEndian.AppendUint16(nil, uint16(sample(0, 0))))
		case pngRGB:
			v := sample(0, 0)
			d := int(s.kind.depth)
			var t []byte
			for c := 2; c >= 0; c-- {
				t = binary.BigEndian.AppendUint16(t, uint16(v>>(c*d)&(1<<d-1)))
			}
			out = pngChunk(out, "tRNS", t)
		case pngPalette:
			t := make([]byte, 1+rng.IntN(npal))
			for i := range t {
				t[i] = []byte{0, 255, 128, byte(rng.Uint32())}[rng.IntN(4)]
			}
			out = pngChunk(out, "tRNS", t)
		}
	}
	zs := z.Bytes()
	step := len(zs)
	if s.idatSplit > 0 {
		step = s.idatSplit
	}
	for len(zs) > 0 {
		n := min(step, len(zs))
		out = pngChunk(out, "IDAT", zs[:n])
		zs = zs[n:]
	}
	if s.ancillary {
		out = pngChunk(out, "tEXt", []byte("Comment\x00generated"))
		out = pngChunk(out, "IDAT", []byte("ignored"))
	}
	return pngChunk(out, "IEND", nil)
}

// generatedPNGs covers every colour type and depth, plain and Adam7, with and without tRNS, split
// IDATs, ancillary chunks, short palettes, and sizes smaller than the Adam7 grid.
func generatedPNGs() []pngSpec {
	var specs []pngSpec
	sizes := [][2]int{{1, 1}, {3, 2}, {7, 9}, {33, 17}, {64, 5}}
	seed := uint64(1)
	for _, k := range pngKinds {
		for _, sz := range sizes {
			for _, il := range []bool{false, true} {
				for _, trns := range []bool{false, true} {
					if trns && (k.ct == pngGrayAlpha || k.ct == pngRGBA) {
						continue
					}
					seed++
					s := pngSpec{kind: k, w: sz[0], h: sz[1], interlaced: il, trns: trns, seed: seed}
					switch seed % 4 {
					case 1:
						s.idatSplit = 7
					case 2:
						s.ancillary = true
					case 3:
						s.shortPLTE = true
					}
					specs = append(specs, s)
				}
			}
		}
	}
	return specs
}

func (s pngSpec) String() string {
	return fmt.Sprintf("ct%d-%dbit-%dx%d-il%v-trns%v-split%d-anc%v-short%v", s.kind.ct, s.kind.depth, s.w, s.h, s.interlaced, s.trns, s.idatSplit, s.ancillary, s.shortPLTE)
}

// TestPNGFastGenerated: every generated file goes through the fast path with image/png's pixels.
func TestPNGFastGenerated(t *testing.T) {
	for _, s := range generatedPNGs() {
		data := encodePNG(s)
		for _, bg := range [][3]uint8{{255, 255, 255}, {1, 2, 250}} {
			if !checkPNGFast(t, s.String(), data, Options{MaxPixels: DefaultMaxPixels, Background: bg}) {
				t.Errorf("%s: the fast decoder did not take a valid file", s)
			}
		}
	}
}

// TestPNGFastDamaged: every single-byte change of some small generated files (lengths, types, CRCs,
// IHDR fields, chunk order, the zlib header, the deflate data, the Adler-32) gives what image/png gave.
func TestPNGFastDamaged(t *testing.T) {
	specs := []pngSpec{
		{kind: pngKind{pngRGB, 8}, w: 5, h: 3, seed: 11},
		{kind: pngKind{pngPalette, 2}, w: 6, h: 4, trns: true, interlaced: true, seed: 12},
		{kind: pngKind{pngGray, 16}, w: 3, h: 3, trns: true, ancillary: true, seed: 13},
		{kind: pngKind{pngRGBA, 8}, w: 4, h: 2, idatSplit: 5, seed: 14},
	}
	opt := DefaultOptions()
	for _, s := range specs {
		data := encodePNG(s)
		for i := 8; i < len(data); i++ {
			for _, x := range []byte{0x01, 0x80, 0xff} {
				d := bytes.Clone(data)
				d[i] ^= x
				checkPNGFast(t, fmt.Sprintf("%s byte %d ^%#x", s, i, x), d, opt)
			}
		}
		for n := 8; n < len(data); n++ {
			checkPNGFast(t, fmt.Sprintf("%s cut at %d", s, n), data[:n], opt)
		}
	}
}

// FuzzPNGDecode: the fast decoder never disagrees with image/png: where it gives pixels they are
// image/png's, and Load answers exactly as the image/png path did.
func FuzzPNGDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(testenv.RepoRoot(f)), "shared", "multimodal", "images", "*.png"))
	for _, p := range files {
		if fi, err := os.Stat(p); err == nil && fi.Size() < 64<<10 {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	for i, s := range generatedPNGs() {
		if i%3 == 0 && s.w*s.h < 100 {
			f.Add(encodePNG(s))
		}
	}
	// 256 Kpx keeps each input to milliseconds, so the fuzzer spends its time on structure, not on size.
	opt := Options{MaxPixels: 1 << 18, Background: [3]uint8{255, 255, 255}}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkPNGFast(t, "input", data, opt)
	})
}

// pngChunkList splits a PNG into its chunks (type, body), checking nothing.
func pngChunkList(data []byte) [][2]string {
	var out [][2]string
	for p := 8; p+12 <= len(data); {
		n := int(binary.BigEndian.Uint32(data[p:]))
		out = append(out, [2]string{string(data[p+4 : p+8]), string(data[p+8 : p+8+n])})
		p += 12 + n
	}
	return out
}

func pngFromChunks(chunks [][2]string) []byte {
	out := []byte("\x89PNG\r\n\x1a\n")
	for _, c := range chunks {
		out = pngChunk(out, c[0], []byte(c[1]))
	}
	return out
}

// TestPNGFastStructure: files that are well formed chunk by chunk but odd as a whole. Each gives what
// image/png gave; the fast decoder takes those it is meant to take and leaves the rest to image/png.
func TestPNGFastStructure(t *testing.T) {
	rgb := pngChunkList(encodePNG(pngSpec{kind: pngKind{pngRGB, 8}, w: 6, h: 4, seed: 21}))
	rgba := pngChunkList(encodePNG(pngSpec{kind: pngKind{pngRGBA, 8}, w: 6, h: 4, seed: 22}))
	gray := pngChunkList(encodePNG(pngSpec{kind: pngKind{pngGray, 8}, w: 6, h: 4, seed: 23}))
	pal := pngChunkList(encodePNG(pngSpec{kind: pngKind{pngPalette, 4}, w: 6, h: 4, seed: 24}))
	// Each base is IHDR, [PLTE,] IDAT, IEND.
	idat := func(c [][2]string) string { return c[len(c)-2][1] }
	with := func(c [][2]string, at int, add ...[2]string) [][2]string {
		out := append([][2]string{}, c[:at]...)
		out = append(out, add...)
		return append(out, c[at:]...)
	}
	replaceIDAT := func(c [][2]string, bodies ...string) [][2]string {
		out := append([][2]string{}, c[:len(c)-2]...)
		for _, b := range bodies {
			out = append(out, [2]string{"IDAT", b})
		}
		return append(out, c[len(c)-1])
	}
	z := idat(rgb)
	tests := []struct {
		name   string
		data   []byte
		fast   bool // the fast decoder takes it
		stdErr bool // image/png refuses it
	}{
		{"plain", pngFromChunks(rgb), true, false},
		{"zero-length IDATs in the run", pngFromChunks(replaceIDAT(rgb, "", z[:3], "", z[3:], "")), true, false},
		{"bytes after IEND", append(pngFromChunks(rgb), "trailing"...), true, false},
		{"unknown chunks before and after", pngFromChunks(with(with(rgb, 1, [2]string{"zzZz", "x"}), 3, [2]string{"teST", ""})), true, false},
		{"junk after the zlib stream in its IDAT", pngFromChunks(replaceIDAT(rgb, z+"junk")), false, false},
		{"the zlib stream ends before the IDAT run", pngFromChunks(replaceIDAT(rgb, z, "more")), false, false},
		{"stream one byte short", pngFromChunks(replaceIDAT(rgb, z[:len(z)-1])), false, true},
		{"Adler-32 wrong", pngFromChunks(replaceIDAT(rgb, z[:len(z)-1]+string(z[len(z)-1]^1))), false, true},
		{"no IEND", pngFromChunks(rgb[:len(rgb)-1]), false, false},
		{"tRNS in RGBA", pngFromChunks(with(rgba, 1, [2]string{"tRNS", "\x00\x01\x00\x02\x00\x03"})), false, true},
		{"PLTE in gray", pngFromChunks(with(gray, 1, [2]string{"PLTE", "\x01\x02\x03"})), false, true},
		{"tRNS before PLTE", pngFromChunks(with(pal, 1, [2]string{"tRNS", "\x00"})), false, true},
		{"palette without PLTE", pngFromChunks(append([][2]string{pal[0]}, pal[2:]...)), false, true},
		{"two tRNS", pngFromChunks(with(gray, 1, [2]string{"tRNS", "\x00\x05"}, [2]string{"tRNS", "\x00\x06"})), false, true},
		{"PLTE after IDAT", pngFromChunks(with(rgb, 2, [2]string{"PLTE", "\x01\x02\x03"})), false, true},
	}
	opt := DefaultOptions()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := pngStd(tc.data, opt); (err != nil) != tc.stdErr {
				t.Errorf("image/png path: %v, want error %v", err, tc.stdErr)
			}
			if got := checkPNGFast(t, tc.name, tc.data, opt); got != tc.fast {
				t.Errorf("fast decoder took it: %v, want %v", got, tc.fast)
			}
		})
	}
}
