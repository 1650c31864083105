//go:build libjpegturbo && cgo

package jpeg

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"testing"
	"unsafe"
)

// TestGoDecoderMatchesLibjpegTurbo is the differential test of the Go decoder against libjpeg-turbo
// itself (the library Pillow uses), over the corpus JPEGs and images Go's encoder writes at many sizes
// and qualities (4:2:0 colour and grayscale).
func TestGoDecoderMatchesLibjpegTurbo(t *testing.T) {
	inputs := corpusJPEGs(t, 1<<30)
	for _, sz := range [][2]int{{1, 1}, {2, 3}, {5, 2}, {7, 9}, {15, 17}, {16, 16}, {33, 31}, {100, 75}, {257, 129}} {
		for _, q := range []int{10, 50, 90, 100} {
			w, h := sz[0], sz[1]
			addGoEncoded(t, inputs, w, h, q, func(x, y int) color.RGBA {
				return color.RGBA{uint8((x*37 + y*91 + (x*y)%23) % 256), uint8(x * 255 / max(w, 1)), uint8(255 - y*3), 255}
			})
		}
	}
	for name, data := range inputs {
		want, werr := decodeBackend(data, 0)
		got, gerr := decodeGo(data, 0)
		switch {
		case werr != nil || gerr != nil:
			if (werr == nil) != (gerr == nil) {
				t.Errorf("%s: libjpeg-turbo %v, Go %v", name, werr, gerr)
			}
		case !bytes.Equal(got.Pix, want.Pix):
			n := 0
			for i := range got.Pix {
				if got.Pix[i] != want.Pix[i] {
					n++
				}
			}
			t.Errorf("%s: %d of %d samples differ", name, n, len(got.Pix))
		}
	}
}

// TestMarkerErrorsMatchLibjpegTurbo: marker segments broken after the first scan began (a scan
// naming a component the frame lacks, a Huffman table with more than 256 codes, a second SOF) give
// the same answer from both decoders — the image libjpeg had output (whole, or blank) as a
// PartialError's, or a whole image when libjpeg never reads the segment.
func TestMarkerErrorsMatchLibjpegTurbo(t *testing.T) {
	inputs := corpusJPEGs(t, 1<<21)
	var partials int
	for name, data := range inputs {
		for _, c := range markerCorruptions(data) {
			want, werr := decodeBackend(c.data, 0)
			got, gerr := decodeGo(c.data, 0)
			var wp, gp *PartialError
			if errors.As(werr, &wp) {
				want, werr = wp.Image, nil
				partials++
			}
			if errors.As(gerr, &gp) {
				got, gerr = gp.Image, nil
			}
			switch {
			case (wp == nil) != (gp == nil):
				t.Errorf("%s %s: libjpeg-turbo %v, Go %v", name, c.name, werr, gerr)
			case werr != nil || gerr != nil:
				if (werr == nil) != (gerr == nil) {
					t.Errorf("%s %s: libjpeg-turbo %v, Go %v", name, c.name, werr, gerr)
				}
			case !bytes.Equal(got.Pix, want.Pix):
				t.Errorf("%s %s: images differ", name, c.name)
			}
		}
	}
	t.Logf("%d corruptions stopped libjpeg-turbo", partials)
	if partials == 0 {
		t.Fatal("no corruption made libjpeg-turbo stop: the test tests nothing")
	}
}

type corruption struct {
	name string
	data []byte
}

// markerCorruptions breaks, one at a time, each SOS, DHT and DQT segment after the first SOS, and
// inserts a second SOF before the last scan.
func markerCorruptions(data []byte) []corruption {
	var out []corruption
	firstSOS := -1
	var sos []int
	for i := 2; i+4 < len(data); i++ {
		if data[i] != 0xff {
			continue
		}
		switch data[i+1] {
		case sosMarker:
			if firstSOS < 0 {
				firstSOS = i
			}
			sos = append(sos, i)
			bad := bytes.Clone(data)
			bad[i+5] = 0xee // the first component selector: no frame has it
			out = append(out, corruption{fmt.Sprintf("sos@%d", i), bad})
		case dhtMarker:
			if firstSOS >= 0 && i+21 < len(data) {
				bad := bytes.Clone(data)
				for j := i + 5; j < i+21; j++ {
					bad[j] = 0xff
				}
				out = append(out, corruption{fmt.Sprintf("dht@%d", i), bad})
			}
		}
	}
	if len(sos) > 0 {
		last := sos[len(sos)-1]
		sof := []byte{0xff, sof0Marker, 0, 11, 8, 0, 8, 0, 8, 1, 1, 0x11, 0}
		bad := append(append(bytes.Clone(data[:last:last]), sof...), data[last:]...)
		out = append(out, corruption{"sof-before-last-scan", bad})
	}
	if n := len(data); n > 2 && data[n-2] == 0xff && data[n-1] == eoiMarker {
		dht := append([]byte{0xff, dhtMarker, 0, 19, 0}, bytes.Repeat([]byte{0xff}, 16)...)
		bad := append(append(bytes.Clone(data[:n-2:n-2]), dht...), 0xff, eoiMarker)
		out = append(out, corruption{"dht-before-eoi", bad})
	}
	return out
}

// TestOutputAlignmentKeepsSamples: where the output buffer starts (on a 32-byte boundary, where
// libjpeg-turbo stores rows past the caches, or off it, as Decode places it) changes nothing in the
// samples, for every subsampling, grayscale and CMYK in the corpus, and for odd widths whose rows
// alternate between the two kinds of stores.
func TestOutputAlignmentKeepsSamples(t *testing.T) {
	inputs := corpusJPEGs(t, 1<<21)
	for _, sz := range [][2]int{{67, 41}, {128, 16}, {333, 9}} {
		addGoEncoded(t, inputs, sz[0], sz[1], 90, func(x, y int) color.RGBA {
			return color.RGBA{uint8(x * 7), uint8(y * 13), uint8(x ^ y), 255}
		})
	}
	for name, data := range inputs {
		want, err := decodeBackend(data, 0)
		if err != nil {
			continue
		}
		n := len(want.Pix)
		buf := make([]byte, n+64)
		base := int(uintptr(unsafe.Pointer(&buf[0]))) & 31
		for _, off := range []int{0, 1, 8, 16, 31} {
			at := (off - base) & 31
			img := &Image{Width: want.Width, Height: want.Height, Channels: want.Channels, Pix: buf[at : at+n]}
			ts, err := openTurbo(data, 0)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			err = ts.readImage(img)
			ts.close()
			if err != nil {
				t.Fatalf("%s at offset %d: %v", name, off, err)
			}
			if !bytes.Equal(img.Pix, want.Pix) {
				t.Errorf("%s: samples decoded %d bytes past a 32-byte boundary differ", name, off)
			}
		}
	}
}
