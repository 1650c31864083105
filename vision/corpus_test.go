package vision

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/gif"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrender/vrender/imaging"
	"github.com/vrender/vrender/internal/testenv"
)

// The corpus tests decode the shared images with the standard library where that gives exactly what
// vLLM's Pillow loader gives, so that the processors are proven before package imaging's decoders
// land. Every other image is pending with its reason; the integrator replaces decodeLossless with
// imaging.Load and the pending list must then become empty.

// multimodalDir is the shared fixtures folder.
func multimodalDir(t testing.TB) string {
	t.Helper()
	return filepath.Join(testenv.SharedDir(t), "multimodal")
}

// pending is why a corpus image cannot be decoded here yet; "" when it can.
func decodeLossless(path string) (imaging.RGB, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return imaging.RGB{}, "", err
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jpg", ".jpeg":
		return imaging.RGB{}, "JPEG: the standard library's IDCT is not libjpeg-turbo's; needs imaging.Load", nil
	case ".webp":
		return imaging.RGB{}, "WebP: no decoder in the standard library; needs imaging.Load", nil
	case ".bmp":
		img, err := decodeBMP24(data)
		return img, "", err
	case ".gif":
		m, err := gif.Decode(bytes.NewReader(data))
		if err != nil {
			return imaging.RGB{}, "", err
		}
		return fromImage(m)
	case ".png":
		m, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			return imaging.RGB{}, "", err
		}
		return fromImage(m)
	}
	return imaging.RGB{}, "", fmt.Errorf("no decoder for %s", path)
}

// fromImage converts as vLLM's loader does where that needs no blending: fully transparent pixels
// become the white background and opaque ones keep their colour. Partial alpha is pending (Pillow's
// paste rounds its own way).
func fromImage(m image.Image) (imaging.RGB, string, error) {
	b := m.Bounds()
	out := imaging.RGB{Width: b.Dx(), Height: b.Dy(), Pix: make([]uint8, b.Dx()*b.Dy()*3)}
	i := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			var r, g, bl, a uint8
			switch m := m.(type) {
			case *image.Gray16:
				// Pillow 9.4 opens 16-bit grey as mode "I"; convert("RGB") clamps each value to 255.
				v := min(m.Gray16At(x, y).Y, 255)
				r, g, bl, a = uint8(v), uint8(v), uint8(v), 255
			case *image.NRGBA:
				c := m.NRGBAAt(x, y)
				r, g, bl, a = c.R, c.G, c.B, c.A
			default:
				cr, cg, cb, ca := m.At(x, y).RGBA() // premultiplied, exact for alpha 0 and 0xffff
				r, g, bl, a = uint8(cr>>8), uint8(cg>>8), uint8(cb>>8), uint8(ca>>8)
			}
			switch a {
			case 255:
			case 0:
				r, g, bl = 255, 255, 255
			default:
				return imaging.RGB{}, "partial alpha: Pillow's paste onto white needs imaging.Load", nil
			}
			out.Pix[i], out.Pix[i+1], out.Pix[i+2] = r, g, bl
			i += 3
		}
	}
	return out, "", nil
}

// decodeBMP24 reads an uncompressed 24-bit BMP (rows bottom-up unless the height is negative, BGR,
// rows padded to four bytes).
func decodeBMP24(data []byte) (imaging.RGB, error) {
	if len(data) < 54 || string(data[:2]) != "BM" {
		return imaging.RGB{}, fmt.Errorf("not a BMP")
	}
	off := int(binary.LittleEndian.Uint32(data[10:]))
	w := int(int32(binary.LittleEndian.Uint32(data[18:])))
	h := int(int32(binary.LittleEndian.Uint32(data[22:])))
	bpp := binary.LittleEndian.Uint16(data[28:])
	comp := binary.LittleEndian.Uint32(data[30:])
	if bpp != 24 || comp != 0 || w <= 0 || h == 0 {
		return imaging.RGB{}, fmt.Errorf("BMP with %d bits, compression %d, %dx%d not handled here", bpp, comp, w, h)
	}
	topDown := h < 0
	if topDown {
		h = -h
	}
	stride := (w*3 + 3) &^ 3
	if off+stride*h > len(data) {
		return imaging.RGB{}, fmt.Errorf("BMP truncated")
	}
	out := imaging.RGB{Width: w, Height: h, Pix: make([]uint8, w*h*3)}
	for y := range h {
		src := y
		if !topDown {
			src = h - 1 - y
		}
		row := data[off+src*stride:]
		for x := range w {
			out.Pix[(y*w+x)*3+0] = row[x*3+2]
			out.Pix[(y*w+x)*3+1] = row[x*3+1]
			out.Pix[(y*w+x)*3+2] = row[x*3+0]
		}
	}
	return out, nil
}

// readJSONL decodes every line of a golden file into T.
func readJSONL[T any](t testing.TB, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		testenv.Missing(t, path, "the multimodal goldens live in ../shared/multimodal/golden")
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// modelProcessor builds the processor of a shared test model (qwen2_5_vl, qwen3_vl).
func modelProcessor(t testing.TB, model string, d DType) Processor {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(multimodalDir(t), "models", model, "preprocessor_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(raw, d)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
