package tokenizer

import (
	"hash/maphash"
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

// segEntry is a cached segment. Entries live in their shard's slab and link
// by index, so that a full cache (64 MiB, tens of thousands of entries) holds
// two pointers per entry for the garbage collector to follow, not six.
type segEntry struct {
	h          uint64
	text       []byte
	ids        []int32
	first      bool
	prev, next int32 // indexes into the shard's ents
}

// segShard is one LRU list of the cache, under its own lock so that
// concurrent requests rarely wait on each other.
type segShard struct {
	mu    sync.Mutex
	index map[uint64]int32 // key hash → ents index; a colliding key replaces the entry
	ents  []segEntry       // ents[0] is the list's sentinel: its next is the most recently used
	free  []int32
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
		s.index = make(map[uint64]int32)
		s.ents = []segEntry{{}}
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

func entryCost(text, ids int) int64 { return int64(text+4*ids) + segEntryOverhead }

// get appends the cached ids of k to ids; h is c.hash(k).
func (c *segmentCache) get(k segKey, h uint64, ids []int) ([]int, bool) {
	s := &c.shards[h%segShards]
	s.mu.Lock()
	i, ok := s.index[h]
	if ok {
		e := &s.ents[i]
		if ok = e.first == k.first && string(e.text) == k.text; ok {
			s.unlink(i)
			s.pushFront(i)
			for _, id := range e.ids {
				ids = append(ids, int(id))
			}
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
	cost := entryCost(len(k.text), len(ids))
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
	e := segEntry{h: h, text: []byte(k.text), ids: make([]int32, len(ids)), first: k.first}
	for i, id := range ids {
		e.ids[i] = int32(id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.index[h]; ok {
		if o := &s.ents[i]; o.first == k.first && string(o.text) == k.text {
			return // a concurrent miss stored it first
		}
		s.remove(i) // a key with the same hash: the newer one stays
	}
	var i int32
	if n := len(s.free); n > 0 {
		i, s.free = s.free[n-1], s.free[:n-1]
		s.ents[i] = e
	} else {
		i = int32(len(s.ents))
		s.ents = append(s.ents, e)
	}
	s.index[h] = i
	s.pushFront(i)
	s.bytes += cost
	for s.bytes > s.max {
		s.remove(s.ents[0].prev)
	}
}

// remove drops entry i from the shard.
func (s *segShard) remove(i int32) {
	e := &s.ents[i]
	s.unlink(i)
	delete(s.index, e.h)
	s.bytes -= entryCost(len(e.text), len(e.ids))
	*e = segEntry{}
	s.free = append(s.free, i)
}

func (s *segShard) unlink(i int32) {
	e := &s.ents[i]
	s.ents[e.prev].next, s.ents[e.next].prev = e.next, e.prev
}

func (s *segShard) pushFront(i int32) {
	head := &s.ents[0]
	e := &s.ents[i]
	e.prev, e.next = 0, head.next
	s.ents[head.next].prev = i
	head.next = i
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
