package bench

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/vrender/vrender/imaging"
)

// TestUniqueImage checks that a tagged file decodes to the pixels of the
// untagged one (the tag sits in a segment decoders skip), that two tags
// give two different files, and that the data URL splice is the base64 of
// the whole tagged file.
func TestUniqueImage(t *testing.T) {
	s := ImageSize{"64x48", 64, 48}
	for _, format := range ImageFormats {
		t.Run(format, func(t *testing.T) {
			data, err := EncodeImage(s, format, 7)
			if err != nil {
				t.Fatal(err)
			}
			u, err := newUniqueImage(format, data)
			if err != nil {
				t.Fatal(err)
			}
			want, err := imaging.Load(data, imaging.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			a, b := u.file(1), u.file(2)
			if bytes.Equal(a, b) {
				t.Fatal("two tags gave the same file")
			}
			for _, f := range [][]byte{a, b} {
				got, err := imaging.Load(f, imaging.DefaultOptions())
				if err != nil {
					t.Fatalf("tagged file: %v", err)
				}
				if got.Width != want.Width || got.Height != want.Height || !bytes.Equal(got.Pix, want.Pix) {
					t.Fatal("the tagged file decodes to other pixels than the original")
				}
			}
			url := u.dataURL(2)
			prefix := "data:" + u.mime + ";base64,"
			if !strings.HasPrefix(url, prefix) {
				t.Fatalf("data URL %.40q", url)
			}
			dec, err := base64.StdEncoding.DecodeString(url[len(prefix):])
			if err != nil || !bytes.Equal(dec, b) {
				t.Fatalf("the data URL is not the tagged file (err %v)", err)
			}
		})
	}
}

// TestEncodeImageJPEGSubsampling checks the generated JPEGs are 4:2:0 (luma
// sampled 2x2, chroma 1x1), as cameras write them, and deterministic.
func TestEncodeImageJPEGSubsampling(t *testing.T) {
	s := ImageSize{"64x48", 64, 48}
	data, err := EncodeImage(s, "jpeg", 3)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := EncodeImage(s, "jpeg", 3)
	if !bytes.Equal(data, again) {
		t.Fatal("the same seed gave two different files")
	}
	sof := bytes.Index(data, []byte{0xFF, 0xC0})
	if sof < 0 || len(data) < sof+19 {
		t.Fatal("no baseline SOF0 segment")
	}
	// SOF0: marker(2) length(2) precision(1) height(2) width(2) ncomp(1),
	// then per component id, sampling (H<<4|V), table.
	if n := data[sof+9]; n != 3 {
		t.Fatalf("%d components, want 3", n)
	}
	for c, want := range []byte{0x22, 0x11, 0x11} {
		if got := data[sof+11+3*c]; got != want {
			t.Errorf("component %d sampling %#x, want %#x", c, got, want)
		}
	}
}
