package tokenizer

import (
	"strings"
	"sync/atomic"
)

// wordCache maps words to their BPE result, like HF's per-model cache of
// up to 10,000 words shorter than 256 bytes. Results are not semantic: the
// cache may forget anything at any time.
//
// Short words, the bulk of natural text, live inline in a seqlock-guarded
// table of atomic words: a lookup reads at most two cache lines and chases
// no pointer. The table is two-way set associative so that two frequent
// words hashing alike do not evict each other forever. Longer words go to a
// direct-mapped table of atomically swapped pointers to immutable entries.
// A full set simply loses a word, so memory stays bounded.
type wordCache struct {
	short []shortEntry
	long  []atomic.Pointer[longEntry]
}

const (
	wordCacheSlots   = 1 << 15 // entries per table; a power of two
	shortKeyMax      = 24      // bytes of key held inline
	shortIDsMax      = 8       // ids held inline
	wordCacheLongMax = 256     // HF's bound on cached word length
)

// shortEntry is one cache line: w[0] is the sequence number (odd while a
// writer is busy) with the key length and id count, w[1:4] the key bytes,
// w[4:8] the ids.
type shortEntry struct {
	w [8]atomic.Uint64
}

type longEntry struct {
	key string
	ids []int32
}

func newWordCache() *wordCache {
	return &wordCache{
		short: make([]shortEntry, wordCacheSlots),
		long:  make([]atomic.Pointer[longEntry], wordCacheSlots),
	}
}

// wordKey is a short word's bytes as three little-endian words, zero
// padded. A struct, not an array: Go passes a struct of three words in
// registers but an array through memory, and reading the array back
// stalled on store forwarding in every lookup (a quarter of a cold 9k
// render's server CPU went to wordCache.get before this).
type wordKey struct{ a, b, c uint64 }

// packKey loads up to 24 bytes of s. The byte patterns below compile to
// whole-word loads.
func packKey(s string) (k wordKey) {
	switch n := len(s); {
	case n > 16:
		k.a, k.b, k.c = load64(s), load64(s[8:]), loadTail(s[16:])
	case n > 8:
		k.a, k.b = load64(s), loadTail(s[8:])
	default:
		k.a = loadTail(s)
	}
	return k
}

func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func load32(s string) uint64 {
	_ = s[3]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24
}

// loadTail packs the 0 to 8 bytes of s; for 4 to 7 bytes two overlapping
// 4-byte loads put every byte in its place.
func loadTail(s string) uint64 {
	switch n := len(s); {
	case n == 8:
		return load64(s)
	case n >= 4:
		return load32(s) | load32(s[n-4:])<<(8*(n-4))
	case n > 0:
		return uint64(s[0]) | uint64(s[n/2])<<(8*(n/2)) | uint64(s[n-1])<<(8*(n-1))
	}
	return 0
}

func mixKey(k wordKey, n int) uint64 {
	h := (k.a^uint64(n)<<59)*0x9E3779B97F4A7C15 ^ k.b*0xBF58476D1CE4E5B9 ^ k.c*0x94D049BB133111EB
	return h ^ h>>29 ^ h>>47
}

// longHash is FNV-1a, enough for the rarer long words.
func longHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h ^ h>>29
}

// get appends the cached ids of word to dst.
func (c *wordCache) get(word string, dst []int) ([]int, bool) {
	if len(word) > shortKeyMax {
		return c.getLong(word, dst)
	}
	k := packKey(word)
	set := mixKey(k, len(word)) & (wordCacheSlots - 2)
	if out, ok := c.short[set].get(k, len(word), dst); ok {
		return out, true
	}
	if out, ok := c.short[set+1].get(k, len(word), dst); ok {
		return out, true
	}
	// A short word with more ids than fit inline lives in the long table.
	return c.getLong(word, dst)
}

func (e *shortEntry) get(k wordKey, keyLen int, dst []int) ([]int, bool) {
	head := e.w[0].Load()
	if head&1 != 0 || int(head>>8&0xFF) != keyLen {
		return dst, false
	}
	if e.w[1].Load() != k.a || e.w[2].Load() != k.b || e.w[3].Load() != k.c {
		return dst, false
	}
	n := int(head >> 16 & 0xFF)
	var ids [4]uint64
	for i := range ids {
		ids[i] = e.w[4+i].Load()
	}
	if e.w[0].Load() != head {
		return dst, false // overwritten while reading
	}
	for i := 0; i < n; i++ {
		dst = append(dst, int(int32(uint32(ids[i>>1]>>(32*(i&1))))))
	}
	return dst, true
}

func (c *wordCache) getLong(word string, dst []int) ([]int, bool) {
	if len(word) >= wordCacheLongMax {
		return dst, false
	}
	e := c.long[longHash(word)&(wordCacheSlots-1)].Load()
	if e == nil || e.key != word {
		return dst, false
	}
	for _, id := range e.ids {
		dst = append(dst, int(id))
	}
	return dst, true
}

func (c *wordCache) put(word string, ids []int32) {
	if len(word) > shortKeyMax || len(ids) > shortIDsMax {
		c.putLong(word, ids)
		return
	}
	k := packKey(word)
	h := mixKey(k, len(word))
	set := h & (wordCacheSlots - 2)
	// Fill an empty way first, else evict the way a hash bit picks.
	e := &c.short[set]
	if e.w[0].Load() != 0 {
		if f := &c.short[set+1]; f.w[0].Load() == 0 || h>>40&1 == 1 {
			e = f
		}
	}
	e.store(k, len(word), ids)
}

func (e *shortEntry) store(k wordKey, keyLen int, ids []int32) {
	head := e.w[0].Load()
	if head&1 != 0 || !e.w[0].CompareAndSwap(head, head|1) {
		return // another writer has the slot; caching is optional
	}
	seq := (head>>32 + 1) << 32
	e.w[1].Store(k.a)
	e.w[2].Store(k.b)
	e.w[3].Store(k.c)
	var packed [4]uint64
	for i, id := range ids {
		packed[i>>1] |= uint64(uint32(id)) << (32 * (i & 1))
	}
	for i, v := range packed {
		e.w[4+i].Store(v)
	}
	e.w[0].Store(seq | uint64(len(ids))<<16 | uint64(keyLen)<<8)
}

func (c *wordCache) putLong(word string, ids []int32) {
	if len(word) >= wordCacheLongMax {
		return
	}
	// The word usually points into the caller's text: clone it so the cache
	// does not pin whole input strings.
	e := &longEntry{key: strings.Clone(word), ids: append([]int32(nil), ids...)}
	c.long[longHash(word)&(wordCacheSlots-1)].Store(e)
}
