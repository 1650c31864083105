package enginesim

import (
	"encoding/binary"
	"hash/fnv"
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/vrender/vrender/kvindex"
)

// defaultBlockSize is vLLM's default --block-size.
const defaultBlockSize = 16

// prefixCache is the simulated engine's automatic prefix cache: an LRU of
// full KV blocks, each named by a hash chained over its parent's as
// vLLM's block hashes are (the sim's hash is its own, FNV-1a; only the
// engine knows it, as only vLLM knows its sha256 ones). A request's cached
// tokens are its leading blocks found in the cache, at most its length
// minus one (vLLM recomputes the last token of a fully cached prompt to get
// logits); once prefilled, every full block of its prompt is stored. Blocks
// of generated tokens are not stored: a multi-turn client re-renders the
// answer into the next prompt, whose tokens rarely equal the generated
// ones.
type prefixCache struct {
	blockSize int

	mu     sync.Mutex
	blocks *simplelru.LRU[uint64, struct{}]
	// evicted collects the hashes the LRU dropped during one store, for
	// the BlockRemoved event.
	evicted []uint64
	// queries and hits are vllm:prefix_cache_queries / _hits (tokens).
	queries, hits int64
	events        *eventSink // nil without KV events
}

func newPrefixCache(capacity, blockSize int, events *eventSink) *prefixCache {
	if blockSize <= 0 {
		blockSize = defaultBlockSize
	}
	c := &prefixCache{blockSize: blockSize, events: events}
	c.blocks, _ = simplelru.NewLRU(capacity, func(h uint64, _ struct{}) { c.evicted = append(c.evicted, h) })
	return c
}

// blockScope is what besides its tokens keys a prompt's blocks: the cache
// salt and the LoRA adapter (vLLM's block hash extra keys).
type blockScope struct {
	salt string
	// lora is the adapter's name ("" for the base model), loraID its
	// engine-local id (LoRARequest.lora_int_id, 1 for the first
	// --lora-modules adapter).
	lora   string
	loraID int64
	// mm are the prompt's multimodal items, sorted by offset: a block
	// overlapping an item's placeholder has the item's (mm_hash, offset in
	// the block) among its extra keys.
	mm []kvindex.MMItem
}

// mmKeys are block i's multimodal extra keys (vLLM's
// _gen_mm_extra_hash_keys).
func (c *prefixCache) mmKeys(sc blockScope, i int) []kvindex.MMKey {
	if len(sc.mm) == 0 {
		return nil
	}
	return kvindex.MMKeys(nil, sc.mm, i*c.blockSize, (i+1)*c.blockSize)
}

// blockHashes are the engine hashes of the full blocks of tokens. The
// adapter's name enters every block's hash, the images a block overlaps
// its own, and the cache salt the first block's, as vLLM's
// generate_block_hash_extra_keys puts them in the extra keys
// (vllm/v1/core/kv_cache_utils.py): a LoRA prompt never hits the base
// model's blocks or another adapter's, and two images of one size (the
// same placeholder tokens) never share a block.
func (c *prefixCache) blockHashes(tokens []int, sc blockScope) []uint64 {
	n := len(tokens) / c.blockSize
	out := make([]uint64, n)
	var parent uint64
	buf := make([]byte, 8+4*c.blockSize)
	for i := range n {
		h := fnv.New64a()
		binary.LittleEndian.PutUint64(buf, parent)
		for j, t := range tokens[i*c.blockSize : (i+1)*c.blockSize] {
			binary.LittleEndian.PutUint32(buf[8+4*j:], uint32(t))
		}
		_, _ = h.Write(buf)
		if sc.lora != "" {
			_, _ = h.Write([]byte{0})
			_, _ = h.Write([]byte(sc.lora))
		}
		for _, k := range c.mmKeys(sc, i) {
			_, _ = h.Write([]byte{2})
			_, _ = h.Write(binary.LittleEndian.AppendUint64([]byte(k.Hash), uint64(int64(k.Offset))))
		}
		if i == 0 && sc.salt != "" {
			_, _ = h.Write([]byte{1})
			_, _ = h.Write([]byte(sc.salt))
		}
		parent = h.Sum64()
		out[i] = parent
	}
	return out
}

// lookup counts the prompt's cached tokens, marks the hit blocks as used
// and returns the prompt's block hashes for store.
func (c *prefixCache) lookup(tokens []int, sc blockScope) (cached int, hashes []uint64) {
	hashes = c.blockHashes(tokens, sc)
	limit := 0
	if len(tokens) > 0 {
		limit = (len(tokens) - 1) / c.blockSize
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	hit := 0
	for hit < min(limit, len(hashes)) {
		if _, ok := c.blocks.Get(hashes[hit]); !ok {
			break
		}
		hit++
	}
	cached = hit * c.blockSize
	c.queries += int64(len(tokens))
	c.hits += int64(cached)
	return cached, hashes
}

// store caches the prompt's blocks once its prefill is done and reports the
// new and evicted blocks as KV events.
func (c *prefixCache) store(tokens []int, sc blockScope, hashes []uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evicted = c.evicted[:0]
	// Blocks are touched last to first, so a prompt's first blocks are the
	// most recently used and its last the first evicted, as vLLM frees a
	// finished request's blocks tail first.
	first := -1 // first block not cached before
	for i := len(hashes) - 1; i >= 0; i-- {
		if _, ok := c.blocks.Get(hashes[i]); !ok {
			c.blocks.Add(hashes[i], struct{}{})
			first = i
		}
	}
	if c.events == nil {
		return
	}
	var removed []uint64
	if len(c.evicted) > 0 {
		removed = append(removed, c.evicted...)
	}
	if first < 0 && removed == nil {
		return
	}
	var st *storedEvent
	if first >= 0 {
		st = &storedEvent{hashes: append([]uint64(nil), hashes[first:]...),
			tokens: append([]int(nil), tokens[first*c.blockSize:len(hashes)*c.blockSize]...), blockSize: c.blockSize,
			lora: sc.lora, loraID: sc.loraID}
		for i := first; i < len(hashes); i++ {
			st.mm = append(st.mm, c.mmKeys(sc, i))
		}
		if first > 0 {
			st.parent, st.hasParent = hashes[first-1], true
		} else {
			st.salt = sc.salt
		}
	}
	c.events.publish(st, removed, false)
}

// reset empties the cache (POST /reset_prefix_cache).
func (c *prefixCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.blocks.Purge()
	c.evicted = c.evicted[:0]
	if c.events != nil {
		c.events.publish(nil, nil, true)
	}
}

func (c *prefixCache) stats() (queries, hits int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queries, c.hits
}
