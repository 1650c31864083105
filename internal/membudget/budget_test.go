package membudget

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// acquireAsync starts an Acquire and reports its error when it returns.
func acquireAsync(ctx context.Context, b *Budget, n int64) (<-chan error, *func()) {
	done := make(chan error, 1)
	rel := new(func())
	go func() {
		r, err := b.Acquire(ctx, n)
		*rel = r
		done <- err
	}()
	return done, rel
}

func waitWaiting(t *testing.T, b *Budget, n int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for b.Stats().Waiting != n {
		if time.Now().After(deadline) {
			t.Fatalf("waiting = %d, want %d", b.Stats().Waiting, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestAcquireAtOnceAndRelease(t *testing.T) {
	b := New(100)
	r1, err := b.Acquire(context.Background(), 60)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := b.Acquire(context.Background(), 40)
	if err != nil {
		t.Fatal(err)
	}
	if s := b.Stats(); s.InUse != 100 || s.Waiting != 0 {
		t.Fatalf("stats %+v", s)
	}
	r1()
	r1() // twice is harmless
	if s := b.Stats(); s.InUse != 40 {
		t.Fatalf("in use %d after one release, want 40", s.InUse)
	}
	r2()
	if s := b.Stats(); s.InUse != 0 {
		t.Fatalf("in use %d, want 0", s.InUse)
	}
	if c := b.WaitHistogram().Count(); c != 2 {
		t.Fatalf("wait histogram count %d, want 2", c)
	}
}

func TestTooLarge(t *testing.T) {
	b := New(100)
	_, err := b.Acquire(context.Background(), 101)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Need != 101 || tl.Capacity != 100 {
		t.Fatalf("err = %v, want TooLargeError{101, 100}", err)
	}
	if b.Stats().Refused != 1 || b.Stats().InUse != 0 {
		t.Fatalf("stats %+v", b.Stats())
	}
	// Exactly the budget fits.
	r, err := b.Acquire(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	r()
}

func TestWaitersAreFIFO(t *testing.T) {
	b := New(100)
	hold, _ := b.Acquire(context.Background(), 90)
	big, bigRel := acquireAsync(context.Background(), b, 80)
	waitWaiting(t, b, 1)
	// A small request behind the big one waits too, although it would fit:
	// the big one must not starve.
	small, smallRel := acquireAsync(context.Background(), b, 10)
	waitWaiting(t, b, 2)
	select {
	case <-small:
		t.Fatal("a small request overtook the queue's head")
	case <-time.After(20 * time.Millisecond):
	}
	hold()
	if err := <-big; err != nil {
		t.Fatal(err)
	}
	if err := <-small; err != nil {
		t.Fatal(err)
	}
	if s := b.Stats(); s.InUse != 90 || s.Waiting != 0 {
		t.Fatalf("stats %+v", s)
	}
	(*bigRel)()
	(*smallRel)()
	if s := b.Stats(); s.InUse != 0 {
		t.Fatalf("in use %d, want 0", s.InUse)
	}
}

func TestCanceledWaiterLeavesQueue(t *testing.T) {
	b := New(100)
	hold, _ := b.Acquire(context.Background(), 50)
	ctx, cancel := context.WithCancel(context.Background())
	big, _ := acquireAsync(ctx, b, 80)
	waitWaiting(t, b, 1)
	small, smallRel := acquireAsync(context.Background(), b, 40)
	waitWaiting(t, b, 2)
	cancel()
	if err := <-big; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled waiter: %v", err)
	}
	// The head left: the small one behind it fits now.
	if err := <-small; err != nil {
		t.Fatal(err)
	}
	if s := b.Stats(); s.InUse != 90 || s.Waiting != 0 {
		t.Fatalf("stats %+v", s)
	}
	hold()
	(*smallRel)()
	if s := b.Stats(); s.InUse != 0 {
		t.Fatalf("in use %d, want 0", s.InUse)
	}
	// An already ended context holds nothing.
	if _, err := b.Acquire(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("ended ctx: %v", err)
	}
}

func TestScopeReleasesAtEnd(t *testing.T) {
	b := New(100)
	ctx, end := WithScope(context.Background())
	r, err := b.Acquire(ctx, 70)
	if err != nil {
		t.Fatal(err)
	}
	r() // the scope owns it
	if s := b.Stats(); s.InUse != 70 {
		t.Fatalf("in use %d before the scope ended, want 70", s.InUse)
	}
	end()
	end()
	if s := b.Stats(); s.InUse != 0 {
		t.Fatalf("in use %d after the scope ended, want 0", s.InUse)
	}
	// After the end the caller releases.
	r, err = b.Acquire(ctx, 30)
	if err != nil {
		t.Fatal(err)
	}
	if s := b.Stats(); s.InUse != 30 {
		t.Fatalf("in use %d, want 30", s.InUse)
	}
	r()
	if s := b.Stats(); s.InUse != 0 {
		t.Fatalf("in use %d, want 0", s.InUse)
	}
}

// TestBudgetUnderConcurrency: many goroutines reserving random sizes, some
// giving up, never hold more than the budget together, and everything is
// back at the end.
func TestBudgetUnderConcurrency(t *testing.T) {
	const capacity = 1000
	b := New(capacity)
	var held, peak atomic.Int64
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range 200 {
				n := 1 + rng.Int64N(capacity)
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.IntN(500))*time.Microsecond)
				r, err := b.Acquire(ctx, n)
				cancel()
				if err != nil {
					if !errors.Is(err, context.DeadlineExceeded) {
						t.Error(err)
					}
					continue
				}
				h := held.Add(n)
				for p := peak.Load(); h > p && !peak.CompareAndSwap(p, h); p = peak.Load() {
				}
				if h > capacity {
					t.Errorf("%d bytes held together, budget %d", h, capacity)
				}
				time.Sleep(time.Duration(rng.IntN(50)) * time.Microsecond)
				held.Add(-n)
				r()
			}
		})
	}
	wg.Wait()
	if s := b.Stats(); s.InUse != 0 || s.Waiting != 0 {
		t.Fatalf("after the run: %+v", s)
	}
	if peak.Load() == 0 {
		t.Fatal("nothing was ever held")
	}
}

func TestSystemMemory(t *testing.T) {
	n, ok := SystemMemory()
	if runtime.GOOS == "linux" && !ok {
		t.Fatal("no memory figure on Linux (/proc/meminfo unreadable?)")
	}
	if ok && n < 64<<20 {
		t.Fatalf("SystemMemory = %d bytes, less than any machine that runs us", n)
	}
}
