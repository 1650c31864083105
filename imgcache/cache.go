package imgcache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// Key names a cached value: a cryptographic digest of every input that
// decides it.
type Key [32]byte

// EntryOverhead approximates what an entry costs beyond its value's own
// bytes (the entry, its map slot, the value's headers).
const EntryOverhead = 256

// shardBytes is the least share of the bound a shard gets: a value larger
// than its shard's share is not kept, so small caches have fewer shards.
const shardBytes = 256 << 20

// maxShards bounds the number of shards (locks) of a large cache.
const maxShards = 16

// Stats are a cache's counters since it was made.
type Stats struct {
	// Hits are values served without running a fill: found in the cache,
	// or shared with a concurrent miss of the same key.
	Hits int64
	// Misses are fills run.
	Misses int64
	// Evictions are values dropped to stay within the bound.
	Evictions int64
	// Bytes is what the cache holds now (values and EntryOverhead each).
	Bytes int64
	// Entries is how many values the cache holds now.
	Entries int64
}

// Cache is a byte-bounded LRU of V by Key, safe for concurrent use. A nil
// *Cache is a disabled cache: Do always fills, and nothing is counted.
type Cache[V any] struct {
	shards                         []shard[V]
	hits, misses, evictions, bytes atomic.Int64
	entries                        atomic.Int64
	maxBytes                       int64
}

// New returns a cache holding at most maxBytes (values plus EntryOverhead
// each), or nil, the disabled cache, when maxBytes <= 0.
func New[V any](maxBytes int64) *Cache[V] {
	if maxBytes <= 0 {
		return nil
	}
	n := int(min(max(maxBytes/shardBytes, 1), maxShards))
	c := &Cache[V]{shards: make([]shard[V], n), maxBytes: maxBytes}
	for i := range c.shards {
		s := &c.shards[i]
		s.max = maxBytes / int64(n)
		s.items = map[Key]*entry[V]{}
		s.calls = map[Key]*call[V]{}
		s.head.prev, s.head.next = &s.head, &s.head
	}
	return c
}

// MaxBytes is the bound the cache was made with (0 for the disabled cache).
func (c *Cache[V]) MaxBytes() int64 {
	if c == nil {
		return 0
	}
	return c.maxBytes
}

// Stats returns the cache's counters (zero for the disabled cache).
func (c *Cache[V]) Stats() Stats {
	if c == nil {
		return Stats{}
	}
	return Stats{Hits: c.hits.Load(), Misses: c.misses.Load(), Evictions: c.evictions.Load(),
		Bytes: c.bytes.Load(), Entries: c.entries.Load()}
}

// Do returns key's value: the cached one (hit true), the one a concurrent
// call for key is computing, or fill's, which is kept when fill succeeds.
// size is what the value holds in bytes. A fill's error is returned to
// every call waiting on it and is not kept, except that a waiter whose own
// ctx is live retries when the fill failed with a context error (the
// caller that ran it went away). A waiter gives up when ctx is done.
func (c *Cache[V]) Do(ctx context.Context, key Key, fill func() (v V, size int64, err error)) (V, bool, error) {
	if c == nil {
		v, _, err := fill()
		return v, false, err
	}
	s := &c.shards[int(key[0])%len(c.shards)]
	for {
		s.mu.Lock()
		if e, ok := s.items[key]; ok {
			s.unlink(e)
			s.pushFront(e)
			v := e.val
			s.mu.Unlock()
			c.hits.Add(1)
			return v, true, nil
		}
		if cl, ok := s.calls[key]; ok {
			s.mu.Unlock()
			select {
			case <-cl.done:
			case <-ctx.Done():
				var zero V
				return zero, false, ctx.Err()
			}
			if cl.err == nil {
				c.hits.Add(1)
				return cl.val, true, nil
			}
			if ctx.Err() == nil && (errors.Is(cl.err, context.Canceled) || errors.Is(cl.err, context.DeadlineExceeded)) {
				continue
			}
			var zero V
			return zero, false, cl.err
		}
		cl := &call[V]{done: make(chan struct{})}
		s.calls[key] = cl
		s.mu.Unlock()
		c.misses.Add(1)
		c.run(s, key, cl, fill)
		return cl.val, false, cl.err
	}
}

// run fills cl and publishes it; a panicking fill still releases its
// waiters (with an error) before the panic goes on.
func (c *Cache[V]) run(s *shard[V], key Key, cl *call[V], fill func() (V, int64, error)) {
	done := false
	defer func() {
		if !done {
			cl.err = fmt.Errorf("imgcache: fill panicked")
		}
		s.mu.Lock()
		delete(s.calls, key)
		if cl.err == nil {
			c.store(s, key, cl.val, cl.size)
		}
		s.mu.Unlock()
		close(cl.done)
	}()
	cl.val, cl.size, cl.err = fill()
	done = true
}

// store adds a value under s.mu and evicts from the tail to fit.
func (c *Cache[V]) store(s *shard[V], key Key, v V, size int64) {
	size += EntryOverhead
	if size > s.max {
		return
	}
	if old, ok := s.items[key]; ok {
		c.remove(s, old)
	}
	e := &entry[V]{key: key, val: v, size: size}
	s.items[key] = e
	s.pushFront(e)
	s.bytes += size
	c.bytes.Add(size)
	c.entries.Add(1)
	for s.bytes > s.max {
		c.remove(s, s.head.prev)
		c.evictions.Add(1)
	}
}

func (c *Cache[V]) remove(s *shard[V], e *entry[V]) {
	s.unlink(e)
	delete(s.items, e.key)
	s.bytes -= e.size
	c.bytes.Add(-e.size)
	c.entries.Add(-1)
}

// shard is one LRU list under its own lock.
type shard[V any] struct {
	mu    sync.Mutex
	items map[Key]*entry[V]
	// head is the list's sentinel: head.next is the most recently used
	// entry, head.prev the least.
	head  entry[V]
	bytes int64
	max   int64
	calls map[Key]*call[V]
}

type entry[V any] struct {
	key        Key
	val        V
	size       int64
	prev, next *entry[V]
}

// call is a fill in progress; val, size and err are set before done closes.
type call[V any] struct {
	done chan struct{}
	val  V
	size int64
	err  error
}

func (s *shard[V]) unlink(e *entry[V]) {
	e.prev.next = e.next
	e.next.prev = e.prev
}

func (s *shard[V]) pushFront(e *entry[V]) {
	e.prev = &s.head
	e.next = s.head.next
	s.head.next.prev = e
	s.head.next = e
}
