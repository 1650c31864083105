package server

import "testing"

// TestBodyPool checks that buffers come back empty and that a buffer
// above maxPooledBody is dropped rather than kept.
func TestBodyPool(t *testing.T) {
	var p bodyPool
	bp := p.get()
	if len(*bp) != 0 || cap(*bp) == 0 {
		t.Fatalf("new buffer: len %d cap %d", len(*bp), cap(*bp))
	}
	*bp = append(*bp, "body"...)
	p.put(bp)
	huge := make([]byte, 0, maxPooledBody+1)
	p.put(&huge)
	for range 4 {
		b := p.get()
		if len(*b) != 0 || cap(*b) > maxPooledBody {
			t.Fatalf("pooled buffer: len %d cap %d", len(*b), cap(*b))
		}
	}
}
