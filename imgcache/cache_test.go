package imgcache

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func key(b byte) Key { return Key{b, b ^ 0x5a} }

// filler returns a fill giving v of size and counting its runs.
func filler(runs *atomic.Int64, v string, size int64) func() (string, int64, error) {
	return func() (string, int64, error) { runs.Add(1); return v, size, nil }
}

func TestHitAfterMiss(t *testing.T) {
	c := New[string](1 << 20)
	var runs atomic.Int64
	for i, wantHit := range []bool{false, true, true} {
		v, hit, err := c.Do(context.Background(), key(1), filler(&runs, "a", 100))
		if err != nil || v != "a" || hit != wantHit {
			t.Fatalf("call %d: %q %v %v, want a %v", i, v, hit, err, wantHit)
		}
	}
	want := Stats{Hits: 2, Misses: 1, Bytes: 100 + EntryOverhead, Entries: 1}
	if got := c.Stats(); got != want || runs.Load() != 1 {
		t.Fatalf("stats %+v runs %d, want %+v and 1 run", got, runs.Load(), want)
	}
}

func TestEvictsLeastRecentlyUsedWithinBound(t *testing.T) {
	const size = 1000 - EntryOverhead // each entry costs 1000 bytes
	c := New[string](3000)
	var runs atomic.Int64
	ctx := context.Background()
	for _, k := range []byte{1, 2, 3} {
		c.Do(ctx, key(k), filler(&runs, "v", size))
	}
	c.Do(ctx, key(1), filler(&runs, "v", size)) // 1 becomes the most recent
	c.Do(ctx, key(4), filler(&runs, "v", size)) // evicts 2
	st := c.Stats()
	if st.Bytes != 3000 || st.Entries != 3 || st.Evictions != 1 {
		t.Fatalf("stats %+v, want 3000 bytes, 3 entries, 1 eviction", st)
	}
	for k, want := range map[byte]bool{1: true, 2: false, 3: true, 4: true} {
		s := &c.shards[int(key(k)[0])%len(c.shards)]
		if _, ok := s.items[key(k)]; ok != want {
			t.Errorf("key %d held %v, want %v", k, ok, want)
		}
	}
	if c.Stats().Bytes > c.MaxBytes() {
		t.Fatalf("holds %d bytes over the bound %d", c.Stats().Bytes, c.MaxBytes())
	}
}

func TestOversizeValueNotKept(t *testing.T) {
	c := New[string](1000)
	var runs atomic.Int64
	for range 2 {
		if _, hit, _ := c.Do(context.Background(), key(1), filler(&runs, "big", 1000)); hit {
			t.Fatal("a value over the bound was kept")
		}
	}
	if st := c.Stats(); st.Bytes != 0 || st.Entries != 0 || st.Misses != 2 || runs.Load() != 2 {
		t.Fatalf("stats %+v runs %d", st, runs.Load())
	}
}

func TestErrorsAreNotKept(t *testing.T) {
	c := New[string](1 << 20)
	bad := errors.New("bad image")
	for range 2 {
		_, hit, err := c.Do(context.Background(), key(1), func() (string, int64, error) { return "", 0, bad })
		if hit || !errors.Is(err, bad) {
			t.Fatalf("hit %v err %v", hit, err)
		}
	}
	if st := c.Stats(); st.Misses != 2 || st.Entries != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestDisabledCacheAlwaysFills(t *testing.T) {
	c := New[string](0)
	if c != nil {
		t.Fatal("New(0) is not the disabled cache")
	}
	var runs atomic.Int64
	for range 3 {
		if v, hit, err := c.Do(context.Background(), key(1), filler(&runs, "a", 1)); v != "a" || hit || err != nil {
			t.Fatalf("%q %v %v", v, hit, err)
		}
	}
	if runs.Load() != 3 || c.Stats() != (Stats{}) || c.MaxBytes() != 0 {
		t.Fatalf("runs %d stats %+v", runs.Load(), c.Stats())
	}
}

func TestShardsByBound(t *testing.T) {
	for _, tt := range []struct {
		max    int64
		shards int
	}{{1, 1}, {shardBytes - 1, 1}, {3 * shardBytes, 3}, {4 << 30, 16}, {1 << 40, 16}} {
		if n := len(New[string](tt.max).shards); n != tt.shards {
			t.Errorf("New(%d): %d shards, want %d", tt.max, n, tt.shards)
		}
	}
}

func TestConcurrentMissesFillOnce(t *testing.T) {
	c := New[string](1 << 20)
	var runs atomic.Int64
	release := make(chan struct{})
	fill := func() (string, int64, error) {
		runs.Add(1)
		<-release
		return "v", 10, nil
	}
	const n = 8
	var wg sync.WaitGroup
	hits := make([]bool, n)
	for i := range n {
		wg.Go(func() {
			v, hit, err := c.Do(context.Background(), key(1), fill)
			if v != "v" || err != nil {
				t.Errorf("%q %v", v, err)
			}
			hits[i] = hit
		})
	}
	// Let every caller reach the cache before the fill ends.
	for c.Stats().Misses == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	close(release)
	wg.Wait()
	nHits := 0
	for _, h := range hits {
		if h {
			nHits++
		}
	}
	if runs.Load() != 1 || nHits != n-1 {
		t.Fatalf("%d fills, %d hits; want 1 and %d", runs.Load(), nHits, n-1)
	}
}

func TestWaiterRetriesWhenFillerGoesAway(t *testing.T) {
	c := New[string](1 << 20)
	started := make(chan struct{})
	leaderCtx, cancel := context.WithCancel(context.Background())
	leaderDone := make(chan error)
	go func() {
		_, _, err := c.Do(leaderCtx, key(1), func() (string, int64, error) {
			close(started)
			<-leaderCtx.Done()
			return "", 0, leaderCtx.Err()
		})
		leaderDone <- err
	}()
	<-started
	waiter := make(chan string)
	go func() {
		v, _, err := c.Do(context.Background(), key(1), func() (string, int64, error) { return "mine", 1, nil })
		if err != nil {
			t.Error(err)
		}
		waiter <- v
	}()
	time.Sleep(10 * time.Millisecond)
	cancel()
	if err := <-leaderDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("leader: %v", err)
	}
	if v := <-waiter; v != "mine" {
		t.Fatalf("waiter got %q, want its own fill", v)
	}
}

func TestWaiterGivesUpWithItsContext(t *testing.T) {
	c := New[string](1 << 20)
	started, release := make(chan struct{}), make(chan struct{})
	go c.Do(context.Background(), key(1), func() (string, int64, error) {
		close(started)
		<-release
		return "v", 1, nil
	})
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := c.Do(ctx, key(1), func() (string, int64, error) { return "", 0, nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	close(release)
}

func TestPanickingFillReleasesWaiters(t *testing.T) {
	c := New[string](1 << 20)
	started, release := make(chan struct{}), make(chan struct{})
	go func() {
		defer func() { recover() }()
		c.Do(context.Background(), key(1), func() (string, int64, error) {
			close(started)
			<-release
			panic("boom")
		})
	}()
	<-started
	got := make(chan error)
	go func() {
		_, _, err := c.Do(context.Background(), key(1), func() (string, int64, error) { return "v", 1, nil })
		got <- err
	}()
	time.Sleep(10 * time.Millisecond)
	close(release)
	select {
	case err := <-got:
		if err == nil {
			t.Fatal("a waiter on a panicked fill got no error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a panicking fill left its waiter hanging")
	}
	if _, hit, err := c.Do(context.Background(), key(1), func() (string, int64, error) { return "v", 1, nil }); hit || err != nil {
		t.Fatalf("after the panic: hit %v err %v", hit, err)
	}
}

func TestConcurrentUseStaysWithinBound(t *testing.T) {
	c := New[[]byte](20_000)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				k := key(byte((g*7 + i) % 40))
				c.Do(context.Background(), k, func() ([]byte, int64, error) { return make([]byte, 700), 700, nil })
			}
		})
	}
	wg.Wait()
	st := c.Stats()
	if st.Bytes > 20_000 || st.Entries != st.Bytes/(700+EntryOverhead) || st.Hits+st.Misses != 8*500 {
		t.Fatalf("stats %+v", st)
	}
}
