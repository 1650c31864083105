package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// ArrivalOffsets returns when each of n requests is sent, relative to the
// start of the run, the way vLLM's get_request schedules them: all at once
// for an infinite rate; otherwise gaps drawn from a gamma distribution with
// shape burstiness and mean 1/rate (burstiness 1 is a Poisson process,
// below 1 burstier, above 1 more regular, +Inf evenly spaced), then scaled
// so the last request goes out at exactly n/rate — vLLM's normalisation,
// which keeps throughput comparable across seeds.
func ArrivalOffsets(n int, rate, burstiness float64, seed uint64) ([]time.Duration, error) {
	if !(rate > 0) {
		return nil, fmt.Errorf("--request-rate must be positive, got %g", rate)
	}
	if !(burstiness > 0) {
		return nil, fmt.Errorf("--burstiness must be positive, got %g", burstiness)
	}
	out := make([]time.Duration, n)
	if math.IsInf(rate, 1) || n == 0 {
		return out, nil
	}
	r := rand.New(rand.NewPCG(seed, 0x2545f4914f6cdd1d))
	cum := make([]float64, n)
	total := 0.0
	for i := range cum {
		gap := 1 / rate
		if !math.IsInf(burstiness, 1) {
			gap = gammaSample(r, burstiness, 1/(rate*burstiness))
		}
		total += gap
		cum[i] = total
	}
	scale := 1.0
	if total > 0 {
		scale = float64(n) / rate / total
	}
	for i, c := range cum {
		out[i] = time.Duration(c * scale * float64(time.Second))
	}
	return out, nil
}

// gammaSample draws from Gamma(shape, scale) with Marsaglia and Tsang's
// method; shapes below 1 use the boost Gamma(a) = Gamma(a+1) * U^(1/a).
func gammaSample(r *rand.Rand, shape, scale float64) float64 {
	if shape == 1 {
		return r.ExpFloat64() * scale
	}
	if shape < 1 {
		u := r.Float64()
		for u == 0 {
			u = r.Float64()
		}
		return gammaSample(r, shape+1, scale) * math.Pow(u, 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v * scale
		}
	}
}
