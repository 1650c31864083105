// Package gcpace applies GOGC's ratio to the part of the heap that is not
// a byte-bounded cache of pointer-free values.
//
// The runtime lets the heap grow by GOGC percent of everything live before
// the next collection. A processed-image cache of 4 GiB is live, so at
// GOGC=100 a server whose cache has filled may hold 4 GiB of garbage on
// top of it: twice the cache in memory, and gigabytes of pages touched for
// the first time after the cache stopped growing. Its values hold no
// pointers, so the collector marks them at almost no cost and there is
// nothing to gain from the proportional headroom: here the headroom is
// GOGC percent of the live heap outside the cache, at least a floor, and
// the collector runs as often as it would without the cache.
package gcpace

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Percent is the GC percent that gives a heap of live bytes, exempt of
// them held by the cache, a goal of live + max(floor, (live-exempt) *
// base / 100): GOGC=base over the heap outside the cache. It is never more
// than base (no cache, no change) and at least 1.
func Percent(live, exempt, floor uint64, base int) int {
	if base <= 0 || live == 0 {
		return max(base, 1)
	}
	exempt = min(exempt, live)
	headroom := max(floor, (live-exempt)/100*uint64(base)+(live-exempt)%100*uint64(base)/100)
	p := headroom / live * 100
	if p < uint64(base) {
		p += headroom % live * 100 / live
	}
	return int(min(max(p, 1), uint64(base)))
}

// Start sets the GC percent after every collection to Percent(live heap,
// exempt(), floor, the percent in effect now) until the returned stop,
// which restores that percent. exempt is called from a goroutine of the
// runtime's. Nothing is done when the collector is off (GOGC=off).
func Start(exempt func() uint64, floor uint64) (stop func()) {
	base := Current()
	if base < 0 {
		return func() {}
	}
	p := &pacer{exempt: exempt, floor: floor, base: base, sample: []metrics.Sample{{Name: liveMetric}}}
	p.arm()
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.stopped = true
		debug.SetGCPercent(base)
	}
}

// liveMetric is the heap marked live by the last collection.
const liveMetric = "/gc/heap/live:bytes"

// Current is the GC percent in effect (GOGC's, or what Start set last);
// -1 when the collector is off.
func Current() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 100 // the runtime's default; the metric exists since Go 1.21
	}
	return int(int64(s[0].Value.Uint64()))
}

type pacer struct {
	exempt  func() uint64
	floor   uint64
	base    int
	mu      sync.Mutex // orders adjustments with stop
	stopped bool
	sample  []metrics.Sample
}

// sentinel is big enough to be an allocation of its own (the tiny
// allocator packs smaller pointer-free objects together, and a neighbour
// could keep it alive).
type sentinel [4]uint64

// arm attaches the next adjustment to a fresh unreachable object: its
// cleanup runs after the collection that finds it dead, the next one.
func (p *pacer) arm() {
	runtime.AddCleanup(new(sentinel), func(p *pacer) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.stopped {
			return
		}
		p.adjust()
		p.arm()
	}, p)
}

// adjust sets the percent for the heap the last collection found live;
// p.mu is held.
func (p *pacer) adjust() {
	metrics.Read(p.sample)
	if p.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	debug.SetGCPercent(Percent(p.sample[0].Value.Uint64(), p.exempt(), p.floor, p.base))
}
