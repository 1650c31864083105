package kvindex

import (
	"math/rand/v2"
	"testing"
)

// TestExpiryTableAgainstMap: random puts, removes and resets against a Go
// map, with keys crowded into few home slots so probes wrap and backward
// shifts cross the table's end.
func TestExpiryTableAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var tab expiryTable
	ref := map[uint64]int64{}
	key := func() uint64 {
		if rng.IntN(2) == 0 {
			return uint64(rng.IntN(64)) // dense: collisions and wraps
		}
		return rng.Uint64() | 1<<40
	}
	for op := range 200000 {
		k := key()
		switch r := rng.IntN(100); {
		case r < 55:
			v := rng.Int64()
			tab.put(k, v)
			if k != 0 {
				ref[k] = v
			}
		case r < 99:
			tab.remove(k)
			delete(ref, k)
		default:
			tab.reset()
			clear(ref)
		}
		if tab.n != len(ref) {
			t.Fatalf("op %d: %d entries, want %d", op, tab.n, len(ref))
		}
		if op%1000 == 0 {
			for k, v := range ref {
				if got, ok := tab.get(k); !ok || got != v {
					t.Fatalf("op %d: get(%x) = %d %v, want %d", op, k, got, ok, v)
				}
			}
		}
		if got, ok := tab.get(k); ok != (ref[k] != 0 || hasKey(ref, k)) || ok && got != ref[k] {
			t.Fatalf("op %d: get(%x) = %d %v, map has %d %v", op, k, got, ok, ref[k], hasKey(ref, k))
		}
	}
	if _, ok := tab.get(0); ok {
		t.Error("key 0 must never be held")
	}
}

func hasKey(m map[uint64]int64, k uint64) bool { _, ok := m[k]; return ok }
