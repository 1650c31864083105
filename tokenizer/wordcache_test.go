package tokenizer

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestWordCache(t *testing.T) {
	c := newWordCache()
	words := map[string][]int32{
		"a":                         {1},
		"hello":                     {2, 3},
		"exactly-twenty-four-bytes": {4},
		strings.Repeat("x", 24):     {5, 6, 7, 8, 9, 10, 11, 12},
		"nine ids":                  {1, 2, 3, 4, 5, 6, 7, 8, 9},
		strings.Repeat("é", 100):    {13, -1},
		"negative":                  {-5},
	}
	for w, ids := range words {
		if _, ok := c.get(w, nil); ok {
			t.Fatalf("%q found before put", w)
		}
		c.put(w, ids)
	}
	for w, ids := range words {
		got, ok := c.get(w, []int{42})
		want := append([]int{42}, toInts(ids)...)
		if !ok || !slices.Equal(got, want) {
			t.Errorf("get(%q) = %v, %v; want %v", w, got, ok, want)
		}
	}
	long := strings.Repeat("y", wordCacheLongMax)
	c.put(long, []int32{1})
	if _, ok := c.get(long, nil); ok {
		t.Error("a word of 256 bytes was cached")
	}
}

// TestWordCacheConcurrent hammers one small key set from several
// goroutines; run with -race. Readers must never see a torn entry.
func TestWordCacheConcurrent(t *testing.T) {
	c := newWordCache()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20000; i++ {
				w := fmt.Sprintf("w%d", i%300)
				ids := []int32{int32(i % 300), int32(i%300) + 1}
				if got, ok := c.get(w, nil); ok && !slices.Equal(got, toInts(ids)) {
					t.Errorf("get(%q) = %v, want %v", w, got, ids)
					return
				}
				c.put(w, ids)
			}
		}()
	}
	wg.Wait()
}

func toInts(ids []int32) []int {
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out
}

func TestPackKey(t *testing.T) {
	for n := 0; n <= shortKeyMax; n++ {
		s := strings.Repeat("\x01\x02\x03\x04\x05\x06\x07\xff", 3)[:n]
		var want [3]uint64
		for i := 0; i < n; i++ {
			want[i/8] |= uint64(s[i]) << (8 * (i % 8))
		}
		if got := packKey(s); got != (wordKey{want[0], want[1], want[2]}) {
			t.Errorf("packKey(len %d) = %x, want %x", n, got, want)
		}
	}
}
