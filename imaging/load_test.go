package imaging

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

func pngWithIHDR(w, h uint32) []byte {
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr, w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 2
	out := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")
	out = append(out, ihdr...)
	out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(append([]byte("IHDR"), ihdr...)))
	// Pillow opens a PNG only once it reaches an IDAT chunk.
	return append(out, "\x00\x00\x00\x00IDAT\x35\xaf\x06\x1e"...)
}

func jpegWithSOF(w, h uint16) []byte {
	return []byte{0xff, 0xd8, 0xff, 0xc0, 0, 17, 8, byte(h >> 8), byte(h), byte(w >> 8), byte(w), 3,
		1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1, 0xff, 0xda, 0, 12, 3, 1, 0, 2, 0x11, 3, 0x11, 0, 63, 0}
}

func riff(chunks ...[]byte) []byte {
	var body []byte
	for _, c := range chunks {
		body = append(body, c...)
	}
	out := []byte("RIFF\x00\x00\x00\x00WEBP")
	binary.LittleEndian.PutUint32(out[4:], uint32(4+len(body)))
	return append(out, body...)
}

func chunk(tag string, body []byte) []byte {
	out := append([]byte(tag), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(out[4:], uint32(len(body)))
	out = append(out, body...)
	if len(body)%2 == 1 {
		out = append(out, 0)
	}
	return out
}

// TestHeaderRefusals covers what must be refused from the header alone, before any pixel buffer is
// allocated: sizes over the limit (decompression bombs), frames larger than their canvas, no format.
func TestHeaderRefusals(t *testing.T) {
	vp8x := make([]byte, 10)
	vp8x[4], vp8x[7] = 9, 9                                          // a 10x10 canvas
	vp8 := []byte{0, 0, 0, 0x9d, 0x01, 0x2a, 0x80, 0x3e, 0x80, 0x3e} // a 16000x16000 frame
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"png 60000x60000", pngWithIHDR(60000, 60000), "Image size (3600000000 pixels) exceeds limit of 178956970 pixels, could be decompression bomb DOS attack."},
		{"jpeg 65535x65535", jpegWithSOF(65535, 65535), "Image size (4294836225 pixels) exceeds limit of 178956970 pixels, could be decompression bomb DOS attack."},
		{"webp frame larger than canvas", riff(chunk("VP8X", vp8x), chunk("VP8 ", vp8)), errWebPDecoder.msg},
		{"webp 16000x16000", riff(chunk("VP8 ", vp8)), "Image size (256000000 pixels) exceeds limit of 178956970 pixels, could be decompression bomb DOS attack."},
		{"empty", nil, ErrUnidentified.msg},
		{"text", []byte("hello, world"), ErrUnidentified.msg},
		{"png without IHDR", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x00IEND"), ErrUnidentified.msg},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, perr := Probe(tc.data, DefaultOptions())
			_, lerr := Load(tc.data, DefaultOptions())
			for _, err := range []error{perr, lerr} {
				var e *Error
				if !errors.As(err, &e) || e.Error() != tc.want {
					t.Errorf("got %v, want %q", err, tc.want)
				}
			}
		})
	}
}

// TestMaxPixels: VLLM_MAX_IMAGE_PIXELS refuses with vLLM's own message (the header's size, before
// EXIF orientation) and 0 or less turns it off, but not Pillow's decompression-bomb limit, which
// Image.open applies first.
func TestMaxPixels(t *testing.T) {
	const bomb = "Image size (200000000 pixels) exceeds limit of 178956970 pixels, could be decompression bomb DOS attack."
	for _, tt := range []struct {
		name      string
		w, h      uint32
		max       int64
		want      string
		wantLimit bool
	}{
		{"off: large image loads", 15000, 10000, 0, "", false},
		{"negative is off", 15000, 10000, -1, "", false},
		{"off: Pillow's limit stays", 20000, 10000, 0, bomb, false},
		{"above Pillow's: Pillow's first", 20000, 10000, 1 << 40, bomb, false},
		{"below Pillow's: vLLM's message", 300, 200, 59_999, "Image dimensions 300x200 (60000 pixels) exceed the maximum of 59999 pixels. Set VLLM_MAX_IMAGE_PIXELS to increase this limit.", true},
		{"at the limit", 300, 200, 60_000, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Probe(pngWithIHDR(tt.w, tt.h), Options{MaxPixels: tt.max})
			got := ""
			if err != nil {
				got = err.Error()
			}
			var le *LimitError
			if got != tt.want || errors.As(err, &le) != tt.wantLimit {
				t.Fatalf("Probe: %v (%T), want %q", err, err, tt.want)
			}
		})
	}
	// Load refuses from the header too, before decoding, with the size as stored.
	data, err := os.ReadFile(filepath.Join(testenv.SharedDir(t), "multimodal", "images", "jpeg_exif_orient6_320x240.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Load(data, Options{MaxPixels: 1000})
	var le *LimitError
	if !errors.As(err, &le) || !strings.HasPrefix(err.Error(), "Image dimensions 320x240 (76800 pixels)") {
		t.Fatalf("Load: %v", err)
	}
}
