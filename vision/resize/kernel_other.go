//go:build !amd64

package resize

// Without vector kernels the Go ones run everywhere.

const hasAVX2, hasAVX512 = false, false

type hvec struct{}

func (*hvec) build(*weights, bool) bool { return false }

func (*hvec) avx512() bool { return false }

func (*hvec) bytes() int { return 0 }

func horizontalVector(out []uint8, in []uint8, w *weights, v *hvec) {
	horizontal(out[:len(w.start)*3], in, w)
}

func verticalVector([]uint8, [][]uint8, []int32, uint, bool) int { return 0 }
