package kvindex

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Index defaults.
const (
	// DefaultMaxBlocksPerEngine bounds each engine's entries: 2^18 blocks
	// of 16 tokens are 4M tokens, more KV cache than one engine holds, at
	// about 100 bytes an entry.
	DefaultMaxBlocksPerEngine = 1 << 18
	// DefaultPredictTTL is how long a predicted entry counts without an
	// event confirming it: long enough for an agent's next turn, short
	// enough that a guess the engine has long evicted stops attracting
	// requests.
	DefaultPredictTTL = 2 * time.Minute
)

// Config tunes an Index.
type Config struct {
	// Keyer computes the keys of event blocks; its block size must be the
	// engines'.
	Keyer Keyer
	// MaxBlocksPerEngine bounds each engine's entries (least recently
	// stored or routed to go first); 0 means DefaultMaxBlocksPerEngine.
	MaxBlocksPerEngine int
	// PredictTTL is the life of a predicted entry; 0 means
	// DefaultPredictTTL.
	PredictTTL time.Duration
	// Now is time.Now; tests move it.
	Now func() time.Time
}

// Index records which engine holds which block keys. It is safe for
// concurrent use.
type Index struct {
	keyer Keyer
	max   int
	ttl   time.Duration
	now   func() time.Time

	mu      sync.RWMutex // guards engines (the map, not the engines' state)
	engines map[string]*engineBlocks
}

// entry is what the index knows of one block on one engine.
type entry struct {
	// expires is when a predicted entry stops counting (unix nanoseconds);
	// 0 for a block an event confirmed.
	expires int64
	// engineHash is the engine's own hash of the block, when an event
	// named it (hasHash).
	engineHash uint64
	hasHash    bool
}

// engineBlocks is one engine's entries.
type engineBlocks struct {
	mu     sync.RWMutex
	blocks *simplelru.LRU[uint64, entry]
	// byHash maps the engine's block hashes to keys, for BlockRemoved and
	// for the parent of a BlockStored; entries leave with their block.
	byHash map[uint64]uint64
}

// New returns an empty index.
func New(cfg Config) *Index {
	if cfg.Keyer.blockSize == 0 {
		cfg.Keyer = NewKeyer(0, "")
	}
	if cfg.MaxBlocksPerEngine <= 0 {
		cfg.MaxBlocksPerEngine = DefaultMaxBlocksPerEngine
	}
	if cfg.PredictTTL <= 0 {
		cfg.PredictTTL = DefaultPredictTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Index{keyer: cfg.Keyer, max: cfg.MaxBlocksPerEngine, ttl: cfg.PredictTTL, now: cfg.Now,
		engines: map[string]*engineBlocks{}}
}

// Keyer is the index's key function.
func (x *Index) Keyer() Keyer { return x.keyer }

func (x *Index) engine(name string, create bool) *engineBlocks {
	x.mu.RLock()
	e := x.engines[name]
	x.mu.RUnlock()
	if e != nil || !create {
		return e
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if e = x.engines[name]; e == nil {
		e = newEngineBlocks(x.max)
		x.engines[name] = e
	}
	return e
}

func newEngineBlocks(size int) *engineBlocks {
	e := &engineBlocks{byHash: map[uint64]uint64{}}
	e.blocks, _ = simplelru.NewLRU(size, func(_ uint64, v entry) {
		if v.hasHash {
			delete(e.byHash, v.engineHash)
		}
	})
	return e
}

// Match is how many leading keys engine holds: the length, in blocks, of
// the longest prefix of the prompt it need not compute again. Blocks are
// prefix-closed (an engine evicts a prefix's last blocks before its first,
// and the index stores a request's first blocks as its most recent), so
// the answer is found by binary search: O(log n) lookups for n blocks.
func (x *Index) Match(engine string, keys []uint64) int {
	e := x.engine(engine, false)
	if e == nil || len(keys) == 0 {
		return 0
	}
	now := x.now().UnixNano()
	e.mu.RLock()
	defer e.mu.RUnlock()
	held := func(i int) bool {
		v, ok := e.blocks.Peek(keys[i])
		return ok && (v.expires == 0 || v.expires > now)
	}
	lo, hi := 0, len(keys) // keys[:lo] held; keys[hi:] not
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if held(mid) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// Predict records that engine is about to compute keys (a request was
// routed there) of which it holds the first held (Match's answer):
// entries it does not hold yet are added with the TTL. The held prefix is
// refreshed only when its last block is past half its TTL (the blocks of a
// prefix were predicted together, so they age together): a session's
// every turn costs the new blocks, not its whole history. Blocks are
// stored last to first, so a prompt's first blocks are the last to go.
func (x *Index) Predict(engine string, keys []uint64, held int) {
	if len(keys) == 0 {
		return
	}
	held = min(max(held, 0), len(keys))
	e := x.engine(engine, true)
	now := x.now()
	expires := now.Add(x.ttl).UnixNano()
	fresh := now.Add(x.ttl / 2).UnixNano()
	e.mu.Lock()
	defer e.mu.Unlock()
	from := held
	if held > 0 {
		if v, ok := e.blocks.Peek(keys[held-1]); !ok || (v.expires != 0 && v.expires < fresh) {
			from = 0
		}
	}
	for i := len(keys) - 1; i >= from; i-- {
		v, ok := e.blocks.Get(keys[i])
		if ok && v.expires == 0 {
			continue
		}
		v.expires = expires
		e.blocks.Add(keys[i], v)
	}
}

// StoredBlocks is a BlockStored event, in the index's terms.
type StoredBlocks struct {
	// Parent is the engine's hash of the block before the first one, when
	// HasParent; without one the first block starts a prompt.
	Parent    uint64
	HasParent bool
	// Hashes are the engine's hashes of the stored blocks, in order.
	Hashes []uint64
	// Tokens are the blocks' token ids, BlockSize per hash.
	Tokens    []int
	BlockSize int
	// LoRA and CacheSalt are the prompt's adapter name and salt (only a
	// first block carries the salt).
	LoRA, CacheSalt string
}

// Errors of Store: the event cannot be keyed, so it is dropped.
var (
	ErrBlockSize     = errors.New("kvindex: event block size differs from the index's")
	ErrUnknownParent = errors.New("kvindex: event parent block is not in the index")
	ErrTokenCount    = errors.New("kvindex: event token ids do not fill its blocks")
)

// Store applies a BlockStored event from engine: each block's key is
// computed from its parent's key and its token ids, and confirmed.
func (x *Index) Store(engine string, ev StoredBlocks) error {
	if ev.BlockSize != x.keyer.blockSize {
		return fmt.Errorf("%w: %d, want %d", ErrBlockSize, ev.BlockSize, x.keyer.blockSize)
	}
	if len(ev.Tokens) != len(ev.Hashes)*ev.BlockSize {
		return fmt.Errorf("%w: %d tokens for %d blocks of %d", ErrTokenCount, len(ev.Tokens), len(ev.Hashes), ev.BlockSize)
	}
	e := x.engine(engine, true)
	e.mu.Lock()
	defer e.mu.Unlock()
	parent := x.keyer.Root(ev.LoRA, ev.CacheSalt)
	if ev.HasParent {
		k, ok := e.byHash[ev.Parent]
		if !ok {
			return ErrUnknownParent
		}
		parent = k
	}
	for i, h := range ev.Hashes {
		key := x.keyer.Next(parent, ev.Tokens[i*ev.BlockSize:(i+1)*ev.BlockSize])
		if old, ok := e.blocks.Peek(key); ok && old.hasHash && old.engineHash != h {
			delete(e.byHash, old.engineHash)
		}
		e.blocks.Add(key, entry{engineHash: h, hasHash: true})
		e.byHash[h] = key
		parent = key
	}
	return nil
}

// Remove applies a BlockRemoved event: the blocks engine evicted.
func (x *Index) Remove(engine string, hashes []uint64) {
	e := x.engine(engine, false)
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, h := range hashes {
		if key, ok := e.byHash[h]; ok {
			e.blocks.Remove(key) // the eviction callback drops byHash[h]
		}
	}
}

// Clear forgets everything engine held: an AllBlocksCleared event, or an
// engine that restarted (its event sequence went back).
func (x *Index) Clear(engine string) {
	e := x.engine(engine, false)
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.blocks.Purge()
	clear(e.byHash)
}

// Len is the number of entries over all engines.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := 0
	for _, e := range x.engines {
		e.mu.RLock()
		n += e.blocks.Len()
		e.mu.RUnlock()
	}
	return n
}
