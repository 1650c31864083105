package pyjson

import (
	"errors"
	"math/rand/v2"
	"testing"
)

func TestCanonicalMatchesPython(t *testing.T) {
	for _, tc := range pythonCanonical {
		got, err := Canonical(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestRejectsWhatPythonRejects(t *testing.T) {
	for _, in := range pythonRejects {
		if got, err := Canonical(in); !errors.Is(err, ErrSyntax) {
			t.Errorf("Canonical(%q) = %q, %v; want ErrSyntax", in, got, err)
		}
	}
}

// feedChunks runs a Value over src split at random points.
func feedChunks(src string, r *rand.Rand) (string, error) {
	var v Value
	var out []byte
	for i := 0; i < len(src); {
		j := i + 1 + r.IntN(4)
		if j > len(src) {
			j = len(src)
		}
		var n int
		var err error
		out, n, err = v.Feed(out, src[i:j])
		if err != nil {
			return "", err
		}
		if v.Done() && i+n < j {
			break
		}
		i = j
	}
	out, err := v.End(out)
	return string(out), err
}

func TestChunkedEqualsWhole(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range pythonCanonical {
		for k := 0; k < 20; k++ {
			got, err := feedChunks(tc.in, r)
			if err != nil || got != tc.want {
				t.Fatalf("chunked %q = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		}
	}
}

func TestFloatRepr(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{{1e-7, "1e-07"}, {-0.000125, "-0.000125"}, {1e16, "1e+16"}, {1e15, "1000000000000000.0"},
		{0.1, "0.1"}, {1.5, "1.5"}, {100, "100.0"}, {1.2345e-5, "1.2345e-05"}, {2.5e+22, "2.5e+22"}} {
		if got := string(AppendFloat(nil, tc.f)); got != tc.want {
			t.Errorf("AppendFloat(%v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

func FuzzValue(f *testing.F) {
	for _, tc := range pythonCanonical {
		f.Add(tc.in, uint64(1))
	}
	for _, tc := range intDigitCases {
		f.Add(tc.in, uint64(2))
	}
	f.Fuzz(func(t *testing.T, s string, seed uint64) {
		whole, errWhole := Canonical(s)
		if errWhole != nil {
			// The digit limit holds however the input is split.
			_, err := feedChunks(s, rand.New(rand.NewPCG(seed, 3)))
			if errors.Is(errWhole, ErrIntDigits) && !errors.Is(err, ErrIntDigits) {
				t.Fatalf("chunked %.40q: err = %v, whole refused with %v", s, err, errWhole)
			}
			return
		}
		// Canonical output is itself canonical, and chunking never matters.
		again, err := Canonical(whole)
		if err != nil || again != whole {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", s, whole, again, err)
		}
		got, err := feedChunks(whole, rand.New(rand.NewPCG(seed, 3)))
		if err != nil || got != whole {
			t.Fatalf("chunked %q = %q, %v", whole, got, err)
		}
	})
}
