//go:build !amd64

package vision

// Without the vector kernel lookupRow runs everywhere.

const patchVector = false

const patchRowMin = 8

func patchRow(out []byte, channel int, src []uint8, levels *[3]levelTable) {
	lookupRow(out, channel, src, levels, 2)
}
