//go:build !amd64

package vision

// Without a vector kernel the table lookups run everywhere.

type levelKernel struct{}

const patchRowMin = 8

func newLevelKernel(levelAffine, *[3]levelTable, DType) *levelKernel { return nil }

func patchRow(out []byte, channel int, src []uint8, levels *[3]levelTable, _ *levelKernel) {
	lookupRow(out, channel, src, levels, 2)
}
