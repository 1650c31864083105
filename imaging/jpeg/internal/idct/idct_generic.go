//go:build !amd64 || purego

package idct

func islow(b, q *Block, dst []byte, stride int) { islowGo(b, q, dst, stride) }
