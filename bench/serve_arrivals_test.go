package bench

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestArrivalOffsets(t *testing.T) {
	if got, err := ArrivalOffsets(5, math.Inf(1), 1, 0); err != nil || slices.ContainsFunc(got, func(d time.Duration) bool { return d != 0 }) {
		t.Errorf("infinite rate: %v, %v; want all zero", got, err)
	}
	even, err := ArrivalOffsets(4, 2, math.Inf(1), 0)
	if err != nil || !slices.Equal(even, []time.Duration{500 * time.Millisecond, time.Second, 1500 * time.Millisecond, 2 * time.Second}) {
		t.Errorf("infinite burstiness: %v, %v; want every 0.5s", even, err)
	}
	for _, burst := range []float64{0.5, 1, 3} {
		a, err := ArrivalOffsets(200, 50, burst, 7)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := ArrivalOffsets(200, 50, burst, 7)
		c, _ := ArrivalOffsets(200, 50, burst, 8)
		if !slices.Equal(a, b) || slices.Equal(a, c) {
			t.Errorf("burstiness %g: not deterministic per seed", burst)
		}
		// vLLM rescales so the last request goes out at n/rate.
		if d := a[len(a)-1] - 4*time.Second; d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("burstiness %g: last offset %v, want 4s", burst, a[len(a)-1])
		}
		if !slices.IsSorted(a) {
			t.Errorf("burstiness %g: offsets not ascending", burst)
		}
	}
	if _, err := ArrivalOffsets(3, 0, 1, 0); err == nil {
		t.Error("accepted rate 0")
	}
	if _, err := ArrivalOffsets(3, 1, 0, 0); err == nil {
		t.Error("accepted burstiness 0")
	}
}

// Gamma(shape, scale) has mean shape*scale and variance shape*scale².
func TestGammaSampleMoments(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, shape := range []float64{0.3, 1, 2.5} {
		const n, scale = 200000, 0.2
		sum, sq := 0.0, 0.0
		for range n {
			x := gammaSample(r, shape, scale)
			sum += x
			sq += x * x
		}
		mean := sum / n
		variance := sq/n - mean*mean
		if math.Abs(mean-shape*scale)/(shape*scale) > 0.02 {
			t.Errorf("shape %g: mean %g, want %g", shape, mean, shape*scale)
		}
		if math.Abs(variance-shape*scale*scale)/(shape*scale*scale) > 0.05 {
			t.Errorf("shape %g: variance %g, want %g", shape, variance, shape*scale*scale)
		}
	}
}
