package jpeg

import (
	"bytes"
	"fmt"
	"image/color"
	"math/rand/v2"
	"testing"
)

// decodeBoth decodes data with the fast sequential path and with the general loop only.
func decodeBoth(data []byte) (fast, general []byte, ferr, gerr error) {
	f := decoder{}
	ferr = f.decode(data, false)
	g := decoder{generalScan: true}
	gerr = g.decode(data, false)
	if ferr == nil {
		fast = f.output().Pix
	}
	if gerr == nil {
		general = g.output().Pix
	}
	return fast, general, ferr, gerr
}

// sequentialInputs is the corpus JPEGs and Go-encoded images of many sizes and qualities (4:2:0 colour
// and grayscale), each also with bytes of its entropy-coded data overwritten at random, so that bad
// codes, EOB runs in sequential scans, excessive DC values and truncation are all reached.
func sequentialInputs(t *testing.T) map[string][]byte {
	inputs := corpusJPEGs(t, 256<<10)
	rng := rand.New(rand.NewPCG(7, 8))
	for range 60 {
		w, h, q := 1+rng.IntN(90), 1+rng.IntN(90), 1+rng.IntN(100)
		addGoEncoded(t, inputs, w, h, q, func(x, y int) color.RGBA {
			return color.RGBA{uint8(rng.IntN(256)), uint8(x * 255 / w), uint8(rng.IntN(256)), 255}
		})
	}
	for name, data := range inputs {
		sos := bytes.LastIndex(data, []byte{0xff, 0xda})
		if sos < 0 || len(data)-sos < 20 || len(data) > 64<<10 {
			continue
		}
		for k := range 4 {
			bad := bytes.Clone(data)
			for range 1 + k*3 {
				bad[sos+14+rng.IntN(len(data)-sos-16)] = byte(rng.Uint32())
			}
			inputs[fmt.Sprintf("%s_corrupt%d", name, k)] = bad
			inputs[fmt.Sprintf("%s_cut%d", name, k)] = data[:sos+14+rng.IntN(len(data)-sos-14)]
		}
	}
	return inputs
}

// TestSequentialMatchesGeneralLoop is the differential test of decodeSequential against the general
// scan loop: identical samples, or the identical error.
func TestSequentialMatchesGeneralLoop(t *testing.T) {
	for name, data := range sequentialInputs(t) {
		fast, general, ferr, gerr := decodeBoth(data)
		if fmt.Sprint(ferr) != fmt.Sprint(gerr) || !bytes.Equal(fast, general) {
			t.Errorf("%s: fast path (err %v) differs from the general loop (err %v)", name, ferr, gerr)
		}
	}
}

// FuzzSequential compares decodeSequential with the general scan loop on arbitrary files.
func FuzzSequential(f *testing.F) {
	addCorpusSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if h, err := DecodeHeader(data); err != nil || h.Width*h.Height > 1<<20 {
			return
		}
		fast, general, ferr, gerr := decodeBoth(data)
		if fmt.Sprint(ferr) != fmt.Sprint(gerr) || !bytes.Equal(fast, general) {
			t.Fatalf("fast path (err %v) differs from the general loop (err %v)", ferr, gerr)
		}
	})
}
