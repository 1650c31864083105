package features

import (
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// ItemLRU is vLLM's multimodal item cache (MultiModalCache.get_lru_cache,
// vllm/multimodal/cache.py): items under their mm_hash, bounded by the sum
// of their sizes (--mm-processor-cache-gb), least recently used evicted
// first. An engine's MultiModalReceiverCache keeps the items themselves;
// the front end's MultiModalProcessorSenderCache keeps only their sizes, so
// that it evicts what the engine evicts and knows which items the engine
// holds. An item larger than the whole cache is not kept (cache_if_fits).
// It is safe for concurrent use.
type ItemLRU[V any] struct {
	limit int64

	mu    sync.Mutex
	bytes int64
	lru   *simplelru.LRU[string, sizedItem[V]]
}

type sizedItem[V any] struct {
	v    V
	size int64
}

// NewItemLRU returns a cache of at most limit bytes of items.
func NewItemLRU[V any](limit int64) *ItemLRU[V] {
	c := &ItemLRU[V]{limit: limit}
	// Bound by bytes (onEvict keeps the sum), not by entries.
	c.lru, _ = simplelru.NewLRU[string, sizedItem[V]](1<<30, func(_ string, it sizedItem[V]) { c.bytes -= it.size })
	return c
}

// Get returns the item under hash and marks it used.
func (c *ItemLRU[V]) Get(hash string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.lru.Get(hash)
	return it.v, ok
}

// Add keeps v of size bytes under hash, evicting the least recently used
// items until it fits; it reports whether v was kept.
func (c *ItemLRU[V]) Add(hash string, size int64, v V) bool {
	if size < 0 || size > c.limit {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Remove(hash)
	for c.bytes+size > c.limit {
		c.lru.RemoveOldest()
	}
	c.lru.Add(hash, sizedItem[V]{v: v, size: size})
	c.bytes += size
	return true
}

// Remove forgets the item under hash.
func (c *ItemLRU[V]) Remove(hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Remove(hash)
}

// Clear forgets every item.
func (c *ItemLRU[V]) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Purge()
}

// Len is the number of items kept.
func (c *ItemLRU[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// Bytes is the sum of the kept items' sizes.
func (c *ItemLRU[V]) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}
