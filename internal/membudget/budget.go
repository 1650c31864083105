package membudget

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vrender/vrender/internal/telemetry"
)

// waitBuckets are the wait-time histogram's bounds (seconds): from a
// scheduling hiccup to a queue that needs a bigger machine.
var waitBuckets = []float64{0.001, 0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// Budget is a byte budget shared by concurrent reservations. It is safe for
// concurrent use.
type Budget struct {
	capacity int64

	mu      sync.Mutex
	used    int64
	waiters list.List // of *waiter, oldest first

	waiting atomic.Int64 // len(waiters), read without the lock by metrics
	inUse   atomic.Int64 // used, read without the lock by metrics
	refused atomic.Int64
	wait    *telemetry.Histogram
}

type waiter struct {
	n     int64
	ready chan struct{} // closed when the bytes were granted
}

// New returns a budget of capacity bytes (at least 1).
func New(capacity int64) *Budget {
	return &Budget{capacity: max(capacity, 1), wait: telemetry.NewHistogram(waitBuckets)}
}

// TooLargeError is a reservation larger than the whole budget: it could never
// be granted.
type TooLargeError struct {
	Need, Capacity int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("membudget: %d bytes needed, more than the whole budget of %d", e.Need, e.Capacity)
}

// Acquire reserves n bytes, waiting in FIFO order until they are free or ctx
// ends (then it returns ctx's error and holds nothing). The returned release
// gives the bytes back; calling it more than once is harmless. Under a Scope
// (see WithScope) the bytes are given back when the scope ends and release
// does nothing.
func (b *Budget) Acquire(ctx context.Context, n int64) (release func(), err error) {
	if n <= 0 {
		return func() {}, nil
	}
	if n > b.capacity {
		b.refused.Add(1)
		return nil, &TooLargeError{Need: n, Capacity: b.capacity}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	start := time.Now()
	b.mu.Lock()
	if b.waiters.Len() == 0 && b.used+n <= b.capacity {
		b.used += n
		b.inUse.Store(b.used)
		b.mu.Unlock()
		b.wait.Observe(time.Since(start))
		return b.hold(ctx, n), nil
	}
	w := &waiter{n: n, ready: make(chan struct{})}
	elem := b.waiters.PushBack(w)
	b.waiting.Store(int64(b.waiters.Len()))
	b.mu.Unlock()

	select {
	case <-w.ready:
		b.wait.Observe(time.Since(start))
		return b.hold(ctx, n), nil
	case <-ctx.Done():
		b.mu.Lock()
		select {
		case <-w.ready:
			// Granted as ctx ended: give the bytes back.
			b.used -= n
		default:
			b.waiters.Remove(elem)
			b.waiting.Store(int64(b.waiters.Len()))
		}
		// Either way the head may fit now (bytes returned, or a large
		// head that blocked the rest left the queue).
		b.grantLocked()
		b.mu.Unlock()
		b.wait.Observe(time.Since(start))
		return nil, ctx.Err()
	}
}

// hold makes the release of n granted bytes: the scope's, when ctx has one.
func (b *Budget) hold(ctx context.Context, n int64) func() {
	var once atomic.Bool
	release := func() {
		if once.Swap(true) {
			return
		}
		b.mu.Lock()
		b.used -= n
		b.grantLocked()
		b.mu.Unlock()
	}
	if s, ok := ctx.Value(scopeKey{}).(*scope); ok && s.add(release) {
		return func() {}
	}
	return release
}

// grantLocked wakes the waiters at the head of the queue that fit, in order.
func (b *Budget) grantLocked() {
	for e := b.waiters.Front(); e != nil; e = b.waiters.Front() {
		w := e.Value.(*waiter)
		if b.used+w.n > b.capacity {
			break
		}
		b.used += w.n
		b.waiters.Remove(e)
		close(w.ready)
	}
	b.waiting.Store(int64(b.waiters.Len()))
	b.inUse.Store(b.used)
}

// Stats is what the budget holds now.
type Stats struct {
	Capacity int64 // bytes in the budget
	InUse    int64 // bytes reserved
	Waiting  int64 // reservations queued
	Refused  int64 // reservations larger than the budget, since start
}

// Stats reads the budget's figures for metrics.
func (b *Budget) Stats() Stats {
	return Stats{Capacity: b.capacity, InUse: b.inUse.Load(), Waiting: b.waiting.Load(), Refused: b.refused.Load()}
}

// WaitHistogram is the time reservations waited (zero when granted at once;
// a reservation whose ctx ended counts the time it waited).
func (b *Budget) WaitHistogram() *telemetry.Histogram { return b.wait }

type scopeKey struct{}

// scope collects the releases of reservations made under one context.
type scope struct {
	mu       sync.Mutex
	ended    bool
	releases []func()
}

// add keeps release for the scope's end; false when the scope has ended
// (the caller then releases the bytes itself).
func (s *scope) add(release func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return false
	}
	s.releases = append(s.releases, release)
	return true
}

func (s *scope) end() {
	s.mu.Lock()
	rs := s.releases
	s.releases, s.ended = nil, true
	s.mu.Unlock()
	for _, r := range rs {
		r()
	}
}

// WithScope returns a context under which reservations last until end is
// called, for memory that outlives the call that reserved it (a request's
// features, until its response is written). end is idempotent; a reservation
// made after it is the caller's to release.
func WithScope(ctx context.Context) (_ context.Context, end func()) {
	s := &scope{}
	return context.WithValue(ctx, scopeKey{}, s), s.end
}
