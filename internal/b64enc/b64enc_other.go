//go:build !amd64 || purego

package b64enc

const haveVBMI = false

func encodeVBMI(dst, src []byte) { panic("b64enc: no AVX-512 VBMI kernel on this platform") }
