package server

import "testing"

// TestBodyPool checks that buffers come back empty, that a small body
// never gets a large buffer, that a large one gets at least its hint, and
// that a buffer above maxPooledLargeBody is dropped rather than kept.
func TestBodyPool(t *testing.T) {
	var p bodyPool
	bp := p.get(0)
	if len(*bp) != 0 || cap(*bp) == 0 {
		t.Fatalf("new buffer: len %d cap %d", len(*bp), cap(*bp))
	}
	*bp = append(*bp, "body"...)
	p.put(bp)
	large := make([]byte, 3, maxPooledBody+1)
	p.put(&large)
	huge := make([]byte, 0, maxPooledLargeBody+1)
	p.put(&huge)
	for range 4 {
		b := p.get(100)
		if len(*b) != 0 || cap(*b) > maxPooledBody {
			t.Fatalf("pooled small buffer: len %d cap %d", len(*b), cap(*b))
		}
	}
	for range 4 {
		b := p.get(2 * maxPooledBody)
		if len(*b) != 0 || cap(*b) <= maxPooledBody || cap(*b) > maxPooledLargeBody {
			t.Fatalf("large buffer: len %d cap %d", len(*b), cap(*b))
		}
	}
}
