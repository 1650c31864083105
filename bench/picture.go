package bench

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math/rand/v2"
)

// pictureDataURL is a w×h JPEG as a data: URL, its content drawn from
// seed: a gradient of a seed-chosen colour, boxes and noise, so pictures of
// different seeds differ in every block while having one size.
func pictureDataURL(w, h int, seed uint64) (string, error) {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	base := [3]int{rng.IntN(256), rng.IntN(256), rng.IntN(256)}
	for y := range h {
		for x := range w {
			n := rng.IntN(24) - 12
			img.SetRGBA(x, y, color.RGBA{
				R: clampByte(base[0] + 96*x/w + n),
				G: clampByte(base[1] + 96*y/h + n),
				B: clampByte(base[2] - 64*(x+y)/(w+h) + n),
				A: 255})
		}
	}
	for range 6 {
		x0, y0 := rng.IntN(w), rng.IntN(h)
		x1, y1 := min(w, x0+1+rng.IntN(w/3+1)), min(h, y0+1+rng.IntN(h/3+1))
		c := color.RGBA{R: uint8(rng.IntN(256)), G: uint8(rng.IntN(256)), B: uint8(rng.IntN(256)), A: 255}
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				img.SetRGBA(x, y, c)
			}
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		return "", fmt.Errorf("picture %dx%d: %w", w, h, err)
	}
	return "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(b.Bytes()), nil
}

func clampByte(v int) uint8 { return uint8(min(max(v, 0), 255)) }
