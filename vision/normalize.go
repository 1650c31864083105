package vision

// The Hugging Face backends compute the same affine map with different roundings, so each gets its
// own table. A table holds, per channel, the encoded value every uint8 level becomes: a processor's
// per-pixel arithmetic is then a lookup, and exactness rests on these 3x256 entries alone.

// levelTable is one channel's 256 encoded values (the dtype's bits, widened to uint32).
type levelTable [256]uint32

// normalization is the rescale/normalize configuration shared by the backends.
type normalization struct {
	doRescale, doNormalize bool
	rescale                float64 // rescale_factor, 1/255 by default
	mean, std              [3]float64
}

// torchvisionLevels is the fast backend (TorchvisionBackend._rescale_and_normalize): with both steps
// on, mean and std become float32 tensors multiplied by float32(1/rescale) and the image, converted
// to float32, is normalised in one step: (x - mean·255) / (std·255) in float32.
func torchvisionLevels(n normalization, d DType) (t [3]levelTable) {
	inv := float32(1.0 / n.rescale)
	for c := range 3 {
		mean, std := float32(n.mean[c]), float32(n.std[c])
		if n.doRescale && n.doNormalize {
			mean, std = mean*inv, std*inv
		}
		for l := range 256 {
			x := float32(l)
			switch {
			case n.doNormalize:
				x = (x - mean) / std
			case n.doRescale:
				x *= float32(n.rescale)
			}
			t[c][l] = d.bits(x)
		}
	}
	return t
}

// pilLevels is the slow backend (PilBackend): rescale in float64 then cast to float32
// (image_transforms.rescale), then (x - mean) / std with float32 mean and std.
func pilLevels(n normalization, d DType) (t [3]levelTable) {
	for c := range 3 {
		mean, std := float32(n.mean[c]), float32(n.std[c])
		for l := range 256 {
			x := float32(l)
			if n.doRescale {
				x = float32(float64(l) * n.rescale)
			}
			if n.doNormalize {
				x = (x - mean) / std
			}
			t[c][l] = d.bits(x)
		}
	}
	return t
}

// levelAffine is a backend's arithmetic in the one shape the vector patch kernel computes:
// (float32(float64(l)·scale) − mean) / std, in float32 after the first product. A backend whose
// arithmetic has another shape has none (ok false) and keeps the table lookups.
type levelAffine struct {
	scale     float64
	mean, std [3]float32
	ok        bool
}

// torchvisionAffine is torchvisionLevels' arithmetic: float32(l) is float32(float64(l)·1) exactly.
// Rescaling alone multiplies in float32, which the shape cannot say.
func torchvisionAffine(n normalization) levelAffine {
	if !n.doNormalize {
		return levelAffine{}
	}
	a := levelAffine{scale: 1, ok: true}
	inv := float32(1.0 / n.rescale)
	for c := range 3 {
		a.mean[c], a.std[c] = float32(n.mean[c]), float32(n.std[c])
		if n.doRescale {
			a.mean[c], a.std[c] = a.mean[c]*inv, a.std[c]*inv
		}
	}
	return a
}

// pilAffine is pilLevels' arithmetic; without normalisation (x − 0) / 1 is x.
func pilAffine(n normalization) levelAffine {
	a := levelAffine{scale: 1, mean: [3]float32{}, std: [3]float32{1, 1, 1}, ok: true}
	if n.doRescale {
		a.scale = n.rescale
	}
	if n.doNormalize {
		for c := range 3 {
			a.mean[c], a.std[c] = float32(n.mean[c]), float32(n.std[c])
		}
	}
	return a
}
