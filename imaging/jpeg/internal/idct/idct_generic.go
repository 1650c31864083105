//go:build !amd64 || purego

package idct

func islowAC(b, q *Block, dst []byte, stride int) { islowGo(b, q, dst, stride) }
