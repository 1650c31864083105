package bench

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
)

// ImageSize is one picture size of the image bench.
type ImageSize struct {
	Name          string
	Width, Height int
}

// ImageSizes are the sizes the image bench measures: VGA, 720p, 1080p.
var ImageSizes = []ImageSize{{"640x480", 640, 480}, {"1280x720", 1280, 720}, {"1920x1080", 1920, 1080}}

// ImageFormats are the file formats the image bench measures.
var ImageFormats = []string{"jpeg", "png"}

// jpegQuality is what cameras and phones write by default, near enough.
const jpegQuality = 90

// photoPixels draws a deterministic photo-like picture: smooth lighting
// gradients, soft-edged discs and hard-edged boxes, and low sensor noise,
// so a JPEG of it has the coefficient statistics of a photograph and a PNG
// of it compresses like one (not like a flat test card).
func photoPixels(w, h int, seed uint64) *image.RGBA {
	rng := rand.New(rand.NewPCG(seed, 0x696d616765))
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	type disc struct{ x, y, r, cr, cg, cb float64 }
	discs := make([]disc, 12)
	for i := range discs {
		discs[i] = disc{rng.Float64() * float64(w), rng.Float64() * float64(h), (0.05 + 0.2*rng.Float64()) * float64(min(w, h)),
			rng.Float64() * 255, rng.Float64() * 255, rng.Float64() * 255}
	}
	type box struct {
		x0, y0, x1, y1 int
		c              [3]float64
	}
	boxes := make([]box, 6)
	for i := range boxes {
		x, y := rng.IntN(w), rng.IntN(h)
		boxes[i] = box{x, y, x + rng.IntN(w/4+1), y + rng.IntN(h/4+1), [3]float64{rng.Float64() * 255, rng.Float64() * 255, rng.Float64() * 255}}
	}
	for y := range h {
		fy := float64(y) / float64(h)
		for x := range w {
			fx := float64(x) / float64(w)
			c := [3]float64{40 + 150*fx, 60 + 120*fy, 90 + 80*math.Sin(3*fx+2*fy)}
			for _, d := range discs {
				dist := math.Hypot(float64(x)-d.x, float64(y)-d.y)
				if a := 1 - dist/d.r; a > 0 {
					a = min(1, 3*a) * 0.6
					c = [3]float64{c[0]*(1-a) + d.cr*a, c[1]*(1-a) + d.cg*a, c[2]*(1-a) + d.cb*a}
				}
			}
			for _, b := range boxes {
				if x >= b.x0 && x < b.x1 && y >= b.y0 && y < b.y1 {
					c = b.c
				}
			}
			o := img.PixOffset(x, y)
			for k := range 3 {
				img.Pix[o+k] = clamp8(c[k] + 3*rng.NormFloat64())
			}
			img.Pix[o+3] = 255
		}
	}
	return img
}

func clamp8(v float64) uint8 {
	return uint8(max(0, min(255, math.Round(v))))
}

// EncodeImage returns the photo-like picture of size s (seeded) as a file
// of format "jpeg" (quality 90, 4:2:0 as cameras write it: Go's encoder
// subsamples chroma 2x2) or "png" (RGB, default compression).
func EncodeImage(s ImageSize, format string, seed uint64) ([]byte, error) {
	img := photoPixels(s.Width, s.Height, seed)
	var buf bytes.Buffer
	switch format {
	case "jpeg":
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: jpegQuality}); err != nil {
			return nil, fmt.Errorf("bench images: encode jpeg: %w", err)
		}
	case "png":
		// image/png writes an opaque RGBA image as 8-bit RGB, as a
		// screenshot tool does.
		if err := png.Encode(&buf, img); err != nil {
			return nil, fmt.Errorf("bench images: encode png: %w", err)
		}
	default:
		return nil, fmt.Errorf("bench images: unknown format %q", format)
	}
	return buf.Bytes(), nil
}

// uniqueImage is an image file whose bytes can be made new for every use
// at the cost of a few bytes: a tag of tagLen bytes in a segment the
// decoders skip (a JPEG COM segment after SOI, a PNG tEXt chunk after
// IHDR), so its mm_hash is new and no cache can serve it while decoding
// costs what the original costs. The bytes before the tag segment's end
// are a multiple of 3 long, so the data URL is the base64 of that short
// head, spliced before the base64 of the rest, computed once.
type uniqueImage struct {
	format string
	head   []byte // the file's bytes before the tag segment
	tail   []byte // the bytes after it
	tail64 string // base64 of tail
	mime   string
}

// tagLen is the width of a unique tag: a 10-digit counter plus framing.
const tagLen = 12

func newUniqueImage(format string, data []byte) (*uniqueImage, error) {
	u := &uniqueImage{format: format}
	var cut int
	switch format {
	case "jpeg":
		if len(data) < 2 || data[0] != 0xFF || data[1] != 0xD8 {
			return nil, fmt.Errorf("bench images: not a JPEG")
		}
		cut, u.mime = 2, "image/jpeg"
	case "png":
		const ihdrEnd = 8 + 4 + 4 + 13 + 4
		if len(data) < ihdrEnd || string(data[12:16]) != "IHDR" {
			return nil, fmt.Errorf("bench images: not a PNG")
		}
		cut, u.mime = ihdrEnd, "image/png"
	default:
		return nil, fmt.Errorf("bench images: unknown format %q", format)
	}
	u.head, u.tail = data[:cut], data[cut:]
	if (cut+u.segmentLen())%3 != 0 {
		return nil, fmt.Errorf("bench images: %s head of %d bytes does not end on a base64 group", format, cut+u.segmentLen())
	}
	u.tail64 = base64.StdEncoding.EncodeToString(u.tail)
	return u, nil
}

// segmentLen is the size of the tag segment.
func (u *uniqueImage) segmentLen() int {
	if u.format == "jpeg" {
		return 2 + 2 + tagLen // marker, length, tag
	}
	return 4 + 4 + tagLen + 4 // length, type, tag, CRC
}

// file returns the whole file with tag n.
func (u *uniqueImage) file(n int) []byte {
	return append(u.taggedHead(n), u.tail...)
}

// taggedHead is the file's bytes up to the end of tag n's segment
// (n < 10^10).
func (u *uniqueImage) taggedHead(n int) []byte {
	tag := []byte(u.tagPrefix() + fmt.Sprintf("%010d", n))
	out := append([]byte(nil), u.head...)
	if u.format == "jpeg" {
		out = append(out, 0xFF, 0xFE)
		out = binary.BigEndian.AppendUint16(out, 2+tagLen)
		out = append(out, tag...)
	} else {
		out = binary.BigEndian.AppendUint32(out, tagLen)
		chunk := append([]byte("tEXt"), tag...)
		out = append(out, chunk...)
		out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(chunk))
	}
	return out
}

// tagPrefix starts the tag: a PNG tEXt keyword must be followed by a NUL.
func (u *uniqueImage) tagPrefix() string {
	if u.format == "png" {
		return "v\x00"
	}
	return "vr"
}

// dataURL is the data: URL of the image with tag n, made without
// re-encoding the whole file.
func (u *uniqueImage) dataURL(n int) string {
	return "data:" + u.mime + ";base64," + base64.StdEncoding.EncodeToString(u.taggedHead(n)) + u.tail64
}
