package gcpace

import (
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"
)

// TestPercent: GOGC's ratio over the heap outside the cache, at least the
// floor, never above base (no cache: Go's pacing unchanged) nor below 1.
func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name                string
		live, exempt, floor uint64
		base, want          int
	}{
		{"no cache", 40 * mib, 0, 256 * mib, 100, 100},
		{"no cache, GOGC=200", 40 * mib, 0, 256 * mib, 200, 200},
		{"full 4 GiB cache, small rest: the floor", 4096*mib + 100*mib, 4096 * mib, 256 * mib, 100, 6},
		{"full cache, large rest: its ratio", 1024*mib + 1024*mib, 1024 * mib, 256 * mib, 100, 50},
		{"full cache, large rest, GOGC=50", 1024*mib + 1024*mib, 1024 * mib, 256 * mib, 50, 25},
		{"cache beside a smaller rest, no floor", 300 * mib, 200 * mib, 0, 100, 33},
		{"exempt above live (counted before the collection)", 100 * mib, 500 * mib, 10 * mib, 100, 10},
		{"floor above everything: base", 100 * mib, 90 * mib, 1 << 40, 100, 100},
		{"huge cache, tiny floor: at least 1", 1 << 40, 1 << 40, 1, 100, 1},
		{"nothing live yet", 0, 0, 256 * mib, 100, 100},
		{"GOGC=0", 40 * mib, 0, 0, 0, 1},
	} {
		if got := Percent(c.live, c.exempt, c.floor, c.base); got != c.want {
			t.Errorf("%s: Percent(%d, %d, %d, %d) = %d, want %d", c.name, c.live, c.exempt, c.floor, c.base, got, c.want)
		}
	}
}

// waitPercent collects until the percent is want (the adjustment runs in
// a cleanup after a collection), or fails.
func waitPercent(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for Current() != want {
		if time.Now().After(deadline) {
			t.Fatalf("GC percent %d, want %d", Current(), want)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// TestStart: after collections the percent follows what the exempt
// function reports, every cycle (not once), and stop restores the percent
// Start found.
func TestStart(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	var exempt atomic.Uint64
	stop := Start(func() uint64 { return exempt.Load() }, 1)
	exempt.Store(1 << 50) // all of the heap is cache: the 1-byte floor
	waitPercent(t, 1)
	exempt.Store(0) // the cache emptied: Go's pacing
	waitPercent(t, 100)
	exempt.Store(1 << 50)
	waitPercent(t, 1)
	stop()
	if p := Current(); p != 100 {
		t.Fatalf("after stop: GC percent %d, want 100", p)
	}
	runtime.GC()
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	if p := Current(); p != 100 {
		t.Fatalf("a collection after stop changed the GC percent to %d", p)
	}
}

// TestStartOff: with the collector off (GOGC=off) Start leaves it off.
func TestStartOff(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	stop := Start(func() uint64 { return 1 << 50 }, 1)
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Fatalf("GC percent %d, want off", p)
	}
	stop()
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Fatalf("after stop: GC percent %d, want off", p)
	}
}
