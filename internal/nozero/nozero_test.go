package nozero

import (
	"bytes"
	"testing"
)

// TestBytes: the length and capacity asked for, distinct storage on every call, and writable to the
// last byte; a non-positive length is empty.
func TestBytes(t *testing.T) {
	for _, n := range []int{1, 2, 63, 64, 4096, 1 << 20, 15 << 20} {
		a, b := Bytes(n), Bytes(n)
		if len(a) != n || cap(a) != n {
			t.Fatalf("Bytes(%d): len %d cap %d", n, len(a), cap(a))
		}
		for i := range a {
			a[i], b[i] = 0xa5, 0x5a
		}
		if &a[0] == &b[0] || !bytes.Equal(a, bytes.Repeat([]byte{0xa5}, n)) {
			t.Fatalf("Bytes(%d): two calls share storage", n)
		}
	}
	for _, n := range []int{0, -1} {
		if b := Bytes(n); b == nil || len(b) != 0 {
			t.Fatalf("Bytes(%d) = %v", n, b)
		}
	}
}
