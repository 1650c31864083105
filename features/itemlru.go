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
// Items are keyed by K (an mm_hash, or any key of the item's content), so
// that every byte-bounded cache of items is this one. It is safe for
// concurrent use.
type ItemLRU[K comparable, V any] struct {
	limit int64

	mu    sync.Mutex
	bytes int64
	lru   *simplelru.LRU[K, sizedItem[V]]
}

type sizedItem[V any] struct {
	v    V
	size int64
}

// NewItemLRU returns a cache of at most limit bytes of items.
func NewItemLRU[K comparable, V any](limit int64) *ItemLRU[K, V] {
	c := &ItemLRU[K, V]{limit: limit}
	// Bound by bytes (onEvict keeps the sum), not by entries.
	c.lru, _ = simplelru.NewLRU[K, sizedItem[V]](1<<30, func(_ K, it sizedItem[V]) { c.bytes -= it.size })
	return c
}

// Get returns the item under key and marks it used.
func (c *ItemLRU[K, V]) Get(key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.lru.Get(key)
	return it.v, ok
}

// Add keeps v of size bytes under key, evicting the least recently used
// items until it fits; it reports whether v was kept.
func (c *ItemLRU[K, V]) Add(key K, size int64, v V) bool {
	if size < 0 || size > c.limit {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Remove(key)
	for c.bytes+size > c.limit {
		c.lru.RemoveOldest()
	}
	c.lru.Add(key, sizedItem[V]{v: v, size: size})
	c.bytes += size
	return true
}

// Remove forgets the item under key.
func (c *ItemLRU[K, V]) Remove(key K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Remove(key)
}

// Clear forgets every item.
func (c *ItemLRU[K, V]) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Purge()
}

// Len is the number of items kept.
func (c *ItemLRU[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// Bytes is the sum of the kept items' sizes.
func (c *ItemLRU[K, V]) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}
