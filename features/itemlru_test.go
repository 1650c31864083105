package features

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
)

func TestItemLRU(t *testing.T) {
	c := NewItemLRU[string, string](100)
	if !c.Add("a", 40, "A") || !c.Add("b", 40, "B") {
		t.Fatal("items that fit were not kept")
	}
	if v, ok := c.Get("a"); !ok || v != "A" { // a is now the most recently used
		t.Fatalf("Get(a) = %q, %v", v, ok)
	}
	if !c.Add("c", 40, "C") { // evicts b, the least recently used
		t.Fatal("c not kept")
	}
	if _, ok := c.Get("b"); ok {
		t.Error("b survived an eviction it was first in line for")
	}
	for _, h := range []string{"a", "c"} {
		if _, ok := c.Get(h); !ok {
			t.Errorf("%s evicted", h)
		}
	}
	if c.Bytes() != 80 || c.Len() != 2 {
		t.Errorf("Bytes, Len = %d, %d; want 80, 2", c.Bytes(), c.Len())
	}
	if c.Add("big", 101, "X") {
		t.Error("an item larger than the cache was kept")
	}
	if c.Len() != 2 {
		t.Error("an item too large to keep evicted others")
	}
	c.Add("a", 10, "A2") // re-added: its new size counts, once
	if c.Bytes() != 50 {
		t.Errorf("Bytes after re-adding a = %d, want 50", c.Bytes())
	}
	if !c.Add("d", 100, "D") || c.Len() != 1 || c.Bytes() != 100 {
		t.Errorf("an item of the whole cache: Len %d Bytes %d", c.Len(), c.Bytes())
	}
	c.Remove("d")
	c.Add("e", 1, "E")
	c.Clear()
	if c.Len() != 0 || c.Bytes() != 0 {
		t.Errorf("after Clear: Len %d Bytes %d", c.Len(), c.Bytes())
	}
}

// refLRU is the slow path ItemLRU must match: a slice in recency order
// (most recently used last), scanned whole on every operation.
type refLRU struct {
	limit int64
	items []refItem
}

type refItem struct {
	key  int
	size int64
	v    int
}

func (r *refLRU) find(key int) int {
	return slices.IndexFunc(r.items, func(it refItem) bool { return it.key == key })
}

func (r *refLRU) bytes() (n int64) {
	for _, it := range r.items {
		n += it.size
	}
	return n
}

func (r *refLRU) get(key int) (int, bool) {
	i := r.find(key)
	if i < 0 {
		return 0, false
	}
	it := r.items[i]
	r.items = append(slices.Delete(r.items, i, i+1), it)
	return it.v, true
}

func (r *refLRU) add(key int, size int64, v int) bool {
	if size < 0 || size > r.limit {
		return false
	}
	r.remove(key)
	for r.bytes()+size > r.limit {
		r.items = r.items[1:]
	}
	r.items = append(r.items, refItem{key, size, v})
	return true
}

func (r *refLRU) remove(key int) {
	if i := r.find(key); i >= 0 {
		r.items = slices.Delete(r.items, i, i+1)
	}
}

// TestItemLRUAsReference: random operations on a few keys (so that
// re-adds, hits and evictions all happen) leave ItemLRU answering as the
// slice-scanning reference does, and holding its bytes.
func TestItemLRUAsReference(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		limit := int64(1 + rng.IntN(200))
		c, ref := NewItemLRU[int, int](limit), &refLRU{limit: limit}
		for op := range 2000 {
			key := rng.IntN(12)
			switch n := rng.IntN(20); {
			case n < 9:
				v, ok := c.Get(key)
				rv, rok := ref.get(key)
				if v != rv || ok != rok {
					t.Fatalf("seed %d op %d: Get(%d) = %d, %v; reference %d, %v", seed, op, key, v, ok, rv, rok)
				}
			case n < 18:
				size := rng.Int64N(limit+limit/4+1) - limit/8 // some too big, some negative
				if kept, rkept := c.Add(key, size, op), ref.add(key, size, op); kept != rkept {
					t.Fatalf("seed %d op %d: Add(%d, %d) = %v; reference %v", seed, op, key, size, kept, rkept)
				}
			case n < 19:
				c.Remove(key)
				ref.remove(key)
			default:
				if rng.IntN(10) == 0 {
					c.Clear()
					ref.items = nil
				}
			}
			if c.Len() != len(ref.items) || c.Bytes() != ref.bytes() {
				t.Fatalf("seed %d op %d: Len %d Bytes %d; reference %d, %d", seed, op, c.Len(), c.Bytes(), len(ref.items), ref.bytes())
			}
			if c.Bytes() > limit {
				t.Fatalf("seed %d op %d: %d bytes over the limit %d", seed, op, c.Bytes(), limit)
			}
		}
	}
}

// TestItemLRUConcurrent: goroutines adding, reading and clearing at once
// (run with -race) leave the byte count equal to the sizes of the items
// kept.
func TestItemLRUConcurrent(t *testing.T) {
	c := NewItemLRU[string, int](1000)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				key := strconv.Itoa((g*7 + i) % 50)
				switch i % 7 {
				case 0, 1, 2:
					c.Add(key, int64(i%60), i%60) // the value is the size
				case 6:
					if i%700 == 6 {
						c.Clear()
					} else {
						c.Remove(key)
					}
				default:
					c.Get(key)
				}
			}
		})
	}
	wg.Wait()
	var n int
	var sum int64
	for k := range 50 {
		if size, ok := c.Get(strconv.Itoa(k)); ok {
			n++
			sum += int64(size)
		}
	}
	if n != c.Len() || sum != c.Bytes() || sum > 1000 {
		t.Fatalf("after concurrent use: Len %d Bytes %d; found %d items of %d bytes", c.Len(), c.Bytes(), n, sum)
	}
}
