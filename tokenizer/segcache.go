package tokenizer

import (
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
)

// DefaultSegmentCacheBytes is the segment cache's default bound: about
// 2.5 M cached ids of chat text.
const DefaultSegmentCacheBytes = 64 << 20

// Segments shorter than minCachedSegment are encoded directly: a lookup
// costs about as much as their encoding.
const minCachedSegment = 16

// segEntryOverhead approximates the bytes an entry costs beyond its text and
// ids: the entry struct, the map slot and the slice headers.
const segEntryOverhead = 96

const segShards = 16

// segSeenSlots is the size of each shard's admission filter.
const segSeenSlots = 1024

// segKey is a cache key. first is set only for the segment at offset 0 of
// a tokenizer whose pre-tokenizer treats the start of the input specially
// (Metaspace prepend_scheme "first"): that segment encodes differently from
// the same text anywhere else.
type segKey struct {
	text  string
	first bool
}

type segEntry struct {
	key        segKey
	ids        []int32
	prev, next *segEntry
}

// segShard is one LRU list of the cache, under its own lock so that
// concurrent requests rarely wait on each other.
type segShard struct {
	mu    sync.Mutex
	m     map[segKey]*segEntry
	head  segEntry // sentinel: head.next is the most recently used
	bytes int64
	max   int64
	// seen admits a segment on its second miss: a direct-mapped table of
	// key hashes, so that cold traffic (text no request repeats) costs a
	// hash and a store instead of copies, allocations and evictions.
	seen [segSeenSlots]uint64
}

// segmentCache maps the text between two added tokens to its ids. HF
// tokenizers cut added tokens out of the raw text before normalising and
// pre-tokenising, so each such segment encodes independently of its
// neighbours (see Tokenizer.segmentsIndependent).
type segmentCache struct {
	seed         maphash.Seed
	shards       [segShards]segShard
	hits, misses atomic.Int64
}

func newSegmentCache(maxBytes int64) *segmentCache {
	c := &segmentCache{seed: maphash.MakeSeed()}
	for i := range c.shards {
		s := &c.shards[i]
		s.m = make(map[segKey]*segEntry)
		s.head.prev, s.head.next = &s.head, &s.head
		s.max = maxBytes / segShards
	}
	return c
}

func (c *segmentCache) hash(k segKey) uint64 {
	h := maphash.String(c.seed, k.text)
	if k.first {
		h ^= 0x9e3779b97f4a7c15
	}
	return h
}

// get appends the cached ids of k to ids; h is c.hash(k).
func (c *segmentCache) get(k segKey, h uint64, ids []int) ([]int, bool) {
	s := &c.shards[h%segShards]
	s.mu.Lock()
	e, ok := s.m[k]
	if ok {
		s.unlink(e)
		s.pushFront(e)
		for _, id := range e.ids {
			ids = append(ids, int(id))
		}
	}
	s.mu.Unlock()
	if ok {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
	return ids, ok
}

// put stores the ids of k if it missed before or admit is set, evicting the
// least recently used entries of its shard; h is c.hash(k). The text is
// copied: it may alias a request buffer.
func (c *segmentCache) put(k segKey, h uint64, ids []int, admit bool) {
	cost := int64(len(k.text)+4*len(ids)) + segEntryOverhead
	s := &c.shards[h%segShards]
	if cost > s.max/4 {
		return // one entry must not flush a quarter of its shard
	}
	if !admit {
		slot := &s.seen[(h/segShards)%segSeenSlots]
		s.mu.Lock()
		if *slot != h {
			*slot = h
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
	}
	e := &segEntry{ids: make([]int32, len(ids))}
	for i, id := range ids {
		e.ids[i] = int32(id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[k]; ok {
		return // a concurrent miss stored it first
	}
	e.key = segKey{text: strings.Clone(k.text), first: k.first}
	s.m[e.key] = e
	s.pushFront(e)
	s.bytes += cost
	for s.bytes > s.max {
		old := s.head.prev
		s.unlink(old)
		delete(s.m, old.key)
		s.bytes -= int64(len(old.key.text)+4*len(old.ids)) + segEntryOverhead
	}
}

func (s *segShard) unlink(e *segEntry) {
	e.prev.next, e.next.prev = e.next, e.prev
}

func (s *segShard) pushFront(e *segEntry) {
	e.prev, e.next = &s.head, s.head.next
	s.head.next.prev = e
	s.head.next = e
}

// stats returns the hit and miss counts and the bytes held.
func (c *segmentCache) stats() (hits, misses, bytes int64) {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		bytes += s.bytes
		s.mu.Unlock()
	}
	return c.hits.Load(), c.misses.Load(), bytes
}
