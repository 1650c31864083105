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
	// about 216 bytes an entry (LRU, engine-hash map and probe table).
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
	// cert certifies the whole prefix the key names: when cert.epoch is
	// the engine's removal epoch plus one (nothing was removed since it was
	// written), every block of the prefix is held until cert.expires (0:
	// for good), so Match need not probe them one by one.
	cert certificate
}

// certificate: see entry.cert.
type certificate struct {
	epoch   uint64
	expires int64
}

// engineBlocks is one engine's entries.
type engineBlocks struct {
	mu     sync.RWMutex
	blocks *simplelru.LRU[uint64, entry]
	// byHash maps the engine's block hashes to keys, for BlockRemoved and
	// for the parent of a BlockStored; entries leave with their block.
	byHash map[uint64]uint64
	// expiry mirrors blocks' keys and expiries for Match's probes; every
	// change to blocks goes through add or the eviction callback.
	expiry expiryTable
	// epoch counts removals (events, the LRU bound, Clear): a removal may
	// open a hole in any prefix, so it voids every certificate written
	// before it.
	epoch uint64
}

// cert is a certificate of the current epoch expiring at expires.
func (e *engineBlocks) cert(expires int64) certificate {
	return certificate{epoch: e.epoch + 1, expires: expires}
}

// certified reports whether key's certificate is valid at now: the whole
// prefix it names is held. A Go map lookup, so only for a few probes.
func (e *engineBlocks) certified(key uint64, now int64) (certificate, bool) {
	b, ok := e.blocks.Peek(key)
	return b.cert, ok && e.valid(b.cert, now)
}

// valid reports whether c is of the current epoch and unexpired at now.
func (e *engineBlocks) valid(c certificate, now int64) bool {
	return c.epoch == e.epoch+1 && (c.expires == 0 || c.expires > now)
}

// add stores v for key, in the LRU and the expiry table.
func (e *engineBlocks) add(key uint64, v entry) {
	e.blocks.Add(key, v)
	e.expiry.put(key, v.expires)
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
	e.blocks, _ = simplelru.NewLRU(size, func(key uint64, v entry) {
		e.expiry.remove(key)
		e.epoch++
		if v.hasHash {
			delete(e.byHash, v.engineHash)
		}
	})
	return e
}

// View is the index at one instant, for a routing decision's lookups and
// prediction: the clock is read once (a clock read costs a fifth of a
// microsecond on a VM's kvm-clock, as much as a hundred probes).
type View struct {
	x   *Index
	now time.Time
}

// At is the index as of now.
func (x *Index) At() View { return View{x: x, now: x.now()} }

// Match is At().Match.
func (x *Index) Match(engine string, keys []uint64) int { return x.At().Match(engine, keys) }

// Predict is At().Predict.
func (x *Index) Predict(engine string, keys []uint64, held int) { x.At().Predict(engine, keys, held) }

// Match is how many leading keys engine holds: the length, in blocks, of
// the longest prefix of the prompt it need not compute again. The scan
// stops at the first block the engine does not hold (vLLM's prefix match
// stops there too): a held block past a missing one is worth nothing, and
// the index can hold such blocks (a prediction's tail outliving its
// head's TTL, an LRU bound evicting an event's first blocks), so a binary
// search over the keys would overcount.
//
// Most prefixes are certified, though (see entry.cert): a binary search
// over the certificates finds a held prefix in O(log n) probes, and only
// the blocks past it are scanned. Without removals since the prompt's
// blocks were predicted or stored, a 32k-token prompt costs about 11
// probes; after one, its blocks are scanned until the next prediction
// certifies them again.
func (v View) Match(engine string, keys []uint64) int {
	e, now := v.reader(engine)
	if e == nil {
		return 0
	}
	defer e.mu.RUnlock()
	from := 0 // keys[:from] are certified held
	lo, hi := 0, len(keys)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if _, ok := e.certified(keys[mid], now); ok {
			from, lo = mid+1, mid+1
		} else {
			hi = mid
		}
	}
	// Where a binary search over held blocks ends is the held prefix's end
	// when the engine's blocks of the prompt form a prefix (mostly): each
	// prediction there renews that block's certificate, which proves every
	// block before it even when older certificates went stale.
	if end := e.estimate(keys, now); end > from {
		if _, ok := e.certified(keys[end-1], now); ok {
			from = end
		}
	}
	for i := from; i < len(keys); i++ {
		if !e.holds(keys[i], now) {
			return i
		}
	}
	return len(keys)
}

// reader returns engine's entries read-locked (the caller unlocks) and
// the view's time in unix nanoseconds; nil for an engine never seen.
func (v View) reader(engine string) (*engineBlocks, int64) {
	e := v.x.engine(engine, false)
	if e == nil {
		return nil, 0
	}
	e.mu.RLock()
	return e, v.now.UnixNano()
}

// holds reports whether key is confirmed or a live prediction at now.
func (e *engineBlocks) holds(key uint64, now int64) bool {
	exp, ok := e.expiry.get(key)
	return ok && (exp == 0 || exp > now)
}

// Holds reports whether engine holds key (a confirmed or live predicted
// entry): one probe of what Match scans.
func (v View) Holds(engine string, key uint64) bool {
	e, now := v.reader(engine)
	if e == nil {
		return false
	}
	defer e.mu.RUnlock()
	return e.holds(key, now)
}

// Estimate guesses Match in O(log n) probes by a binary search for the
// last held key. It is exact when the engine's blocks of the prompt form
// a prefix, as they mostly do (engines evict a prefix's last blocks
// first), and can be off either way when they do not: a router may use
// it to order its work, never to score.
func (v View) Estimate(engine string, keys []uint64) int {
	e, now := v.reader(engine)
	if e == nil {
		return 0
	}
	defer e.mu.RUnlock()
	return e.estimate(keys, now)
}

// estimate is Estimate under e's lock.
func (e *engineBlocks) estimate(keys []uint64, now int64) int {
	lo, hi := 0, len(keys) // keys[:lo] taken as held, keys[hi:] as not
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if e.holds(keys[mid], now) {
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
func (v View) Predict(engine string, keys []uint64, held int) {
	if len(keys) == 0 {
		return
	}
	held = min(max(held, 0), len(keys))
	x := v.x
	e := x.engine(engine, true)
	expires := v.now.Add(x.ttl).UnixNano()
	fresh := v.now.Add(x.ttl / 2).UnixNano()
	e.mu.Lock()
	defer e.mu.Unlock()
	from := held
	if held > 0 {
		if b, ok := e.blocks.Peek(keys[held-1]); !ok || (b.expires != 0 && b.expires < fresh) {
			from = 0
		}
	}
	// Once stored, every keys[:i+1] is held until the earlier of the
	// prefix's expiry and expires (confirmed blocks last longer): the new
	// blocks' certificate. A removal while adding (the LRU bound) moves the
	// epoch and voids it.
	var cert certificate
	if from == 0 {
		cert = e.cert(expires)
	} else if pc, ok := e.prefixCert(keys[:from], v.now.UnixNano()); ok {
		cert = e.cert(expires)
		if pc.expires != 0 {
			cert.expires = min(pc.expires, expires)
		}
	}
	nowNS := v.now.UnixNano()
	for i := len(keys) - 1; i >= from; i-- {
		b, ok := e.blocks.Get(keys[i])
		if ok && b.expires == 0 {
			if cert != (certificate{}) && !e.valid(b.cert, nowNS) {
				b.cert = cert // a confirmed block's stale certificate renewed
				e.blocks.Add(keys[i], b)
			}
			continue
		}
		b.expires, b.cert = expires, cert
		e.add(keys[i], b)
	}
}

// prefixCert is a certificate for keys, a prefix said to be held: the
// last key's own when valid, else one made by probing every key, which
// then becomes the last key's (a removal had voided it).
func (e *engineBlocks) prefixCert(keys []uint64, now int64) (certificate, bool) {
	last := keys[len(keys)-1]
	if c, ok := e.certified(last, now); ok {
		return c, true
	}
	var minExp int64
	for _, k := range keys {
		exp, ok := e.expiry.get(k)
		if !ok || exp != 0 && exp <= now {
			return certificate{}, false
		}
		if exp != 0 && (minExp == 0 || exp < minExp) {
			minExp = exp
		}
	}
	c := e.cert(minExp)
	if b, ok := e.blocks.Peek(last); ok {
		b.cert = c
		e.blocks.Add(last, b)
	}
	return c, true
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
	// MM holds, per block (nil, or one entry per hash), the multimodal
	// extra keys the event's extra_keys carry: folded into the block's key
	// as KeysMM folds a request's items.
	MM [][]MMKey
}

// Errors of Store: the event cannot be keyed, so it is dropped.
var (
	ErrBlockSize     = errors.New("kvindex: event block size differs from the index's")
	ErrUnknownParent = errors.New("kvindex: event parent block is not in the index")
	ErrTokenCount    = errors.New("kvindex: event token ids do not fill its blocks")
	ErrExtraKeys     = errors.New("kvindex: event extra keys do not match its blocks")
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
	if ev.MM != nil && len(ev.MM) != len(ev.Hashes) {
		return fmt.Errorf("%w: %d blocks' multimodal keys for %d blocks", ErrExtraKeys, len(ev.MM), len(ev.Hashes))
	}
	e := x.engine(engine, true)
	e.mu.Lock()
	defer e.mu.Unlock()
	parent := x.keyer.Root(ev.LoRA, ev.CacheSalt)
	cert := e.cert(0) // a first block's prefix is itself, confirmed
	if ev.HasParent {
		k, ok := e.byHash[ev.Parent]
		if !ok {
			return ErrUnknownParent
		}
		parent = k
		if cert, ok = e.certified(k, x.now().UnixNano()); !ok {
			cert = certificate{}
		}
	}
	for i, h := range ev.Hashes {
		key := x.keyer.Next(parent, ev.Tokens[i*ev.BlockSize:(i+1)*ev.BlockSize])
		if ev.MM != nil {
			key = foldMM(nil, key, ev.MM[i])
		}
		if old, ok := e.blocks.Peek(key); ok && old.hasHash && old.engineHash != h {
			delete(e.byHash, old.engineHash)
		}
		e.add(key, entry{engineHash: h, hasHash: true, cert: cert})
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
	e.expiry.reset()
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
