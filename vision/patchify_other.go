//go:build !amd64

package vision

// Without a vector kernel the table lookups run everywhere.

type levelKernel struct{}

const patchRowMin = 8

func newLevelKernel(levelAffine, *[3]levelTable, DType) *levelKernel { return nil }

func patchWindows(out []byte, channel, _ int, src []uint8, stride, P, M, wins int, levels *[3]levelTable, _ *levelKernel) bool {
	lookupWindows(out, channel, src, stride, P, M, wins, levels, 2)
	return false
}

func streamOut(dst, src []byte) { copy(dst, src) }
