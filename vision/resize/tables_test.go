package resize

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestTablesFound: a Tables hands out the tables it computed for a size again, as long as it keeps
// them, and a Resizer without one computes its own.
func TestTablesFound(t *testing.T) {
	var shared Tables
	key := tablesKey{w: weightsKey{in: 1280, out: 1288, m: Torch}, horiz: true, wide: true}
	a, _ := shared.get(key, nil)
	b, _ := shared.get(key, nil)
	if a != b {
		t.Fatal("the same key's tables were computed twice")
	}
	var own tables
	own.fill(key, nil)
	if own.vector != a.vector || fmt.Sprint(own.w) != fmt.Sprint(a.w) {
		t.Fatal("shared tables differ from a Resizer's own")
	}
	other, _ := shared.get(tablesKey{w: key.w, horiz: true}, nil) // the AVX2 kernel's arrangement
	if other == a {
		t.Fatal("tables built without AVX-512 were served for a key allowing it")
	}
}

// TestSharedTables: Resizers taking their tables from one Tables — computed by another Resizer, kept
// across sizes and methods, found again — write the bytes of a Resizer computing its own, on every
// kernel set (the best, AVX2, Go), whose horizontal tables differ.
func TestSharedTables(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	cases := []sizeCase{{1280, 720, 1288, 728}, {640, 480, 644, 476}, {97, 61, 40, 200}, {300, 200, 300, 150}, {300, 200, 150, 200}, {1280, 720, 1288, 728}}
	var shared Tables
	for round := range 2 { // the second round finds every table computed
		for _, c := range cases {
			src := testImage(rng, c.sw, c.sh)
			for _, m := range []Method{Torch, Pillow} {
				for _, ks := range kernelSets() {
					want := make([]uint8, c.dw*c.dh*3)
					own := ks.r
					if err := own.RGB(want, c.dw, c.dh, src, c.sw, c.sh, m); err != nil {
						t.Fatal(err)
					}
					for i := range 2 { // two Resizers on the same tables
						r := ks.r
						r.UseTables(&shared)
						got := make([]uint8, len(want))
						if err := r.RGB(got, c.dw, c.dh, src, c.sw, c.sh, m); err != nil {
							t.Fatal(err)
						}
						if d := firstDiff(got, want); d >= 0 {
							t.Fatalf("round %d %v %v %s Resizer %d: byte %d differs with shared tables", round, c, m, ks.name, i, d)
						}
					}
				}
			}
		}
	}
}

// TestTablesBounded: however many sizes pass through it, a Tables holds at most maxTables entries
// and maxTablesBytes of tables (or the one newest entry), the most recently used ones.
func TestTablesBounded(t *testing.T) {
	var shared Tables
	check := func() {
		t.Helper()
		sum := 0
		for _, e := range shared.entries {
			sum += e.bytes()
		}
		if sum != shared.bytes {
			t.Fatalf("accounted %d bytes, entries hold %d", shared.bytes, sum)
		}
		if len(shared.entries) > maxTables || (len(shared.entries) > 1 && sum > maxTablesBytes) {
			t.Fatalf("%d entries of %d bytes, bounds %d and %d", len(shared.entries), sum, maxTables, maxTablesBytes)
		}
	}
	keep := tablesKey{w: weightsKey{in: 1280, out: 1288, m: Torch}, horiz: true, wide: true}
	kept, _ := shared.get(keep, nil)
	for i := range 3 * maxTables {
		shared.get(tablesKey{w: weightsKey{in: 100 + i, out: 200, m: Pillow}}, nil)
		check()
		if e, _ := shared.get(keep, nil); e != kept && i < maxTables {
			t.Fatalf("step %d: the most recently used entry was evicted", i)
		}
	}
	// Large reductions, hundreds of kilobytes each, meet the memory bound before the count.
	for i := range maxTables {
		shared.get(tablesKey{w: weightsKey{in: 40000 + i, out: 1000, m: Torch}, horiz: true, wide: true}, nil)
		check()
	}
	if len(shared.entries) >= maxTables {
		t.Fatalf("%d entries of %d bytes: the memory bound never applied", len(shared.entries), shared.bytes)
	}
	// One entry over the whole budget is still kept, alone.
	huge, _ := shared.get(tablesKey{w: weightsKey{in: 1 << 20, out: 1000, m: Pillow}}, nil)
	check()
	if len(shared.entries) != 1 || shared.entries[0] != huge {
		t.Fatalf("%d entries after one over the budget", len(shared.entries))
	}
}

// TestTablesConcurrent: Resizers on several goroutines sharing one Tables, over more sizes than it
// keeps, write the bytes of Resizers with their own tables (run with -race for the locking).
func TestTablesConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(73, 74))
	type job struct {
		c    sizeCase
		m    Method
		src  []uint8
		want []uint8
	}
	var jobs []job
	for i := range 2 * maxTables {
		c := sizeCase{40 + i, 30 + i%5, 44 + i%3, 28}
		m := []Method{Torch, Pillow}[i%2]
		j := job{c: c, m: m, src: testImage(rng, c.sw, c.sh), want: make([]uint8, c.dw*c.dh*3)}
		var r Resizer
		if err := r.RGB(j.want, c.dw, c.dh, j.src, c.sw, c.sh, m); err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	var shared Tables
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Go(func() {
			var r Resizer
			r.UseTables(&shared)
			for n := range 3 * len(jobs) {
				j := jobs[(n*(g+1))%len(jobs)]
				got := make([]uint8, len(j.want))
				if err := r.RGB(got, j.c.dw, j.c.dh, j.src, j.c.sw, j.c.sh, j.m); err != nil {
					errs <- err
					return
				}
				if d := firstDiff(got, j.want); d >= 0 {
					errs <- fmt.Errorf("%v %v: byte %d differs with shared tables", j.c, j.m, d)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
