//go:build !amd64

package vision

// Without a vector kernel the table lookups run everywhere.

type levelKernel struct{}

const patchRowMin = 8

func newLevelKernel(levelAffine, *[3]levelTable, DType) *levelKernel { return nil }

func patchBlock(out []byte, channel, _ int, src []uint8, stride, P int, levels *[3]levelTable, _ *levelKernel) bool {
	for py := range P {
		lookupRow(out[2*py*P:], channel, src[py*stride:py*stride+3*P], levels, 2)
	}
	return false
}

func streamOut(dst, src []byte) { copy(dst, src) }
