package kvindex

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/zeebo/xxh3"
)

func seq(n, start int) []int {
	t := make([]int, n)
	for i := range t {
		t[i] = start + i
	}
	return t
}

func TestKeysChainPrefix(t *testing.T) {
	k := NewKeyer(16, "m")
	root := k.Root("", "")
	long := seq(100, 7)
	all := k.Keys(nil, root, long)
	if len(all) != 6 {
		t.Fatalf("%d keys for 100 tokens in blocks of 16, want 6 (no partial block)", len(all))
	}
	if short := k.Keys(nil, root, long[:40]); !slices.Equal(short, all[:2]) {
		t.Errorf("keys of a prefix %x are not a prefix of the keys %x", short, all)
	}
	parent := root
	for i, want := range all {
		parent = k.Next(parent, long[i*16:(i+1)*16])
		if parent != want {
			t.Fatalf("Next at block %d = %x, Keys = %x", i, parent, want)
		}
	}
	other := slices.Clone(long)
	other[20]++
	if o := k.Keys(nil, root, other); o[0] != all[0] || o[1] == all[1] || o[5] == all[5] {
		t.Errorf("a changed token in block 1 must change keys from block 1 on only: %x vs %x", o, all)
	}
	for _, r := range []uint64{k.Root("lora", ""), k.Root("", "salt"), NewKeyer(16, "other").Root("", "")} {
		if r == root || k.Keys(nil, r, long)[0] == all[0] {
			t.Errorf("root %x: LoRA, salt and model must change every key", r)
		}
	}
}

func TestMatchIsLongestPrefix(t *testing.T) {
	x := New(Config{Keyer: NewKeyer(4, "")})
	k := x.Keyer()
	root := k.Root("", "")
	keys := k.Keys(nil, root, seq(4*50, 0))
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		x.Clear("e")
		n := rng.IntN(len(keys) + 1)
		x.Predict("e", keys[:n], 0)
		if got := x.Match("e", keys); got != n {
			t.Fatalf("trial %d: Match = %d, want %d", trial, got, n)
		}
		// Linear reference over a query that diverges at a random block.
		q := slices.Clone(keys)
		d := rng.IntN(len(q))
		for i := d; i < len(q); i++ {
			q[i] ^= 0xdead
		}
		want := 0
		for want < len(q) && want < n && q[want] == keys[want] {
			want++
		}
		if got := x.Match("e", q); got != want {
			t.Fatalf("trial %d: Match of a query diverging at %d = %d, want %d", trial, d, got, want)
		}
	}
	if x.Match("absent", keys) != 0 || x.Match("e", nil) != 0 {
		t.Error("an unknown engine or an empty prompt must match nothing")
	}
}

func TestPredictExpires(t *testing.T) {
	now := time.Unix(1000, 0)
	x := New(Config{Keyer: NewKeyer(4, ""), PredictTTL: time.Minute, Now: func() time.Time { return now }})
	keys := x.Keyer().Keys(nil, x.Keyer().Root("", ""), seq(40, 0))
	x.Predict("e", keys, 0)
	now = now.Add(59 * time.Second)
	if got := x.Match("e", keys); got != len(keys) {
		t.Fatalf("before the TTL: Match = %d, want %d", got, len(keys))
	}
	now = now.Add(2 * time.Second)
	if got := x.Match("e", keys); got != 0 {
		t.Fatalf("after the TTL: Match = %d, want 0", got)
	}
	// A confirmed block does not expire, and a prediction does not demote it.
	tokens := seq(8, 0)
	if err := x.Store("e", StoredBlocks{Hashes: []uint64{11, 12}, Tokens: tokens, BlockSize: 4}); err != nil {
		t.Fatal(err)
	}
	x.Predict("e", keys[:2], 2)
	now = now.Add(time.Hour)
	if got := x.Match("e", keys); got != 2 {
		t.Fatalf("confirmed blocks after an hour: Match = %d, want 2", got)
	}
}

func TestEventsMapEngineHashes(t *testing.T) {
	k := NewKeyer(4, "m")
	x := New(Config{Keyer: k})
	tokens := seq(20, 100) // 5 blocks
	keys := k.Keys(nil, k.Root("", ""), tokens)
	// The engine's hashes are opaque: the index keys blocks from the
	// parent's key and the token ids.
	if err := x.Store("e", StoredBlocks{Hashes: []uint64{901, 902}, Tokens: tokens[:8], BlockSize: 4}); err != nil {
		t.Fatal(err)
	}
	if err := x.Store("e", StoredBlocks{Parent: 902, HasParent: true, Hashes: []uint64{903, 904, 905},
		Tokens: tokens[8:20], BlockSize: 4}); err != nil {
		t.Fatal(err)
	}
	if got := x.Match("e", keys); got != 5 {
		t.Fatalf("after two stores: Match = %d, want 5", got)
	}
	x.Remove("e", []uint64{905, 904})
	if got := x.Match("e", keys); got != 3 {
		t.Fatalf("after removing the last two: Match = %d, want 3", got)
	}
	if err := x.Store("e", StoredBlocks{Parent: 904, HasParent: true, Hashes: []uint64{1}, Tokens: tokens[16:20], BlockSize: 4}); !errors.Is(err, ErrUnknownParent) {
		t.Errorf("store under a removed parent: %v, want ErrUnknownParent", err)
	}
	if err := x.Store("e", StoredBlocks{Hashes: []uint64{1}, Tokens: tokens[:16], BlockSize: 16}); !errors.Is(err, ErrBlockSize) {
		t.Errorf("other block size: %v, want ErrBlockSize", err)
	}
	if err := x.Store("e", StoredBlocks{Hashes: []uint64{1, 2}, Tokens: tokens[:5], BlockSize: 4}); !errors.Is(err, ErrTokenCount) {
		t.Errorf("short tokens: %v, want ErrTokenCount", err)
	}
	salted := k.Keys(nil, k.Root("", "s"), tokens)
	if err := x.Store("f", StoredBlocks{Hashes: []uint64{7}, Tokens: tokens[:4], BlockSize: 4, CacheSalt: "s"}); err != nil {
		t.Fatal(err)
	}
	if x.Match("f", keys) != 0 || x.Match("f", salted) != 1 {
		t.Error("a salted block must match only salted prompts")
	}
	x.Clear("e")
	if x.Match("e", keys) != 0 {
		t.Error("Clear left blocks")
	}
	if err := x.Store("e", StoredBlocks{Parent: 902, HasParent: true, Hashes: []uint64{3}, Tokens: tokens[8:12], BlockSize: 4}); !errors.Is(err, ErrUnknownParent) {
		t.Errorf("Clear must drop the engine-hash map too: %v", err)
	}
}

// TestIndexBoundedUnderSoak feeds far more blocks than the bound, by
// prediction and by events with removals that never come, and checks the
// index and its engine-hash map stay within the bound.
func TestIndexBoundedUnderSoak(t *testing.T) {
	const bound = 512
	k := NewKeyer(4, "")
	x := New(Config{Keyer: k, MaxBlocksPerEngine: bound})
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 5000 {
		tokens := seq(4*(1+rng.IntN(40)), rng.IntN(1<<20))
		keys := k.Keys(nil, k.Root("", ""), tokens)
		engine := []string{"a", "b", "c"}[i%3]
		x.Predict(engine, keys, 0)
		hashes := make([]uint64, len(keys))
		for j := range hashes {
			hashes[j] = rng.Uint64()
		}
		if err := x.Store(engine, StoredBlocks{Hashes: hashes, Tokens: tokens, BlockSize: 4}); err != nil {
			t.Fatal(err)
		}
		if got := x.Match(engine, keys); got != len(keys) {
			t.Fatalf("just stored prompt: Match = %d, want %d", got, len(keys))
		}
	}
	if n := x.Len(); n > 3*bound {
		t.Fatalf("index holds %d entries, bound is %d per engine", n, bound)
	}
	for name, e := range x.engines {
		if len(e.byHash) > bound {
			t.Errorf("engine %s: %d engine hashes kept, bound %d", name, len(e.byHash), bound)
		}
	}
}

func BenchmarkRoute32k(b *testing.B) {
	k := NewKeyer(16, "m")
	x := New(Config{Keyer: k})
	tokens := seq(32768, 0)
	keys := k.Keys(nil, k.Root("", ""), tokens)
	for i, e := range []string{"a", "b", "c", "d"} {
		x.Predict(e, keys[:len(keys)*(i+1)/4], 0)
	}
	buf := make([]uint64, 0, len(keys))
	b.ResetTimer()
	for range b.N {
		buf = k.Keys(buf[:0], k.Root("", ""), tokens)
		for _, e := range []string{"a", "b", "c", "d"} {
			_ = x.Match(e, buf)
		}
	}
}

// TestKey16IsXXH3: the unrolled key of a 16-id block is exactly xxh3-64 of
// the ids as 4-byte little-endian words, seeded with the parent key, the
// definition every other block size uses.
func TestKey16IsXXH3(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 0, 64)
	for trial := range 2000 {
		var b [16]int
		for i := range b {
			switch trial % 3 {
			case 0:
				b[i] = rng.IntN(1 << 17)
			case 1:
				b[i] = int(rng.Uint32())
			default:
				b[i] = int(rng.Uint64()) // out of range: taken modulo 2^32 on both paths
			}
		}
		seed := rng.Uint64()
		if got, want := NewKeyer(16, "").Next(seed, b[:]), keyPacked(buf, seed, b[:]); got != want {
			t.Fatalf("trial %d: the 16-id key = %x, xxh3 of the packed ids = %x", trial, got, want)
		}
	}
	k := NewKeyer(16, "m")
	tokens := seq(16*9+5, 1000)
	keys := k.Keys(nil, k.Root("", ""), tokens)
	parent := k.Root("", "")
	for i, key := range keys {
		var p []byte
		for _, id := range tokens[i*16 : (i+1)*16] {
			p = append(p, byte(id), byte(id>>8), byte(id>>16), byte(id>>24))
		}
		if parent = xxh3.HashSeed(p, parent); parent != key {
			t.Fatalf("block %d: Keys = %x, xxh3 of its packed ids = %x", i, key, parent)
		}
	}
}

// TestKeysOtherBlockSizes: block sizes other than 16 take the packed path
// (on the stack up to 64 ids, in a buffer beyond) with the same keys as
// Next block by block.
func TestKeysOtherBlockSizes(t *testing.T) {
	for _, bs := range []int{1, 4, 32, 64, 65, 128} {
		k := NewKeyer(bs, "m")
		tokens := seq(bs*5+bs/2, 3)
		keys := k.Keys(nil, k.Root("", ""), tokens)
		if len(keys) != 5 {
			t.Fatalf("block size %d: %d keys, want 5", bs, len(keys))
		}
		parent := k.Root("", "")
		for i, key := range keys {
			if parent = k.Next(parent, tokens[i*bs:(i+1)*bs]); parent != key {
				t.Fatalf("block size %d, block %d: Next = %x, Keys = %x", bs, i, parent, key)
			}
		}
	}
}

// BenchmarkKeys32k is the block keys of a 32k-token prompt, the bulk of a
// routing decision.
func BenchmarkKeys32k(b *testing.B) {
	k := NewKeyer(16, "m")
	tokens := seq(32768, 100)
	dst := make([]uint64, 0, 2048)
	root := k.Root("", "")
	b.SetBytes(int64(len(tokens)))
	for b.Loop() {
		dst = k.Keys(dst[:0], root, tokens)
	}
}

// TestMatchStopsAtFirstMissingBlock: blocks held past a missing one do
// not count, whichever way the hole came (a prediction's head expiring
// before its tail, a removed head): the linear reference decides.
func TestMatchStopsAtFirstMissingBlock(t *testing.T) {
	now := time.Unix(1000, 0)
	x := New(Config{Keyer: NewKeyer(4, ""), PredictTTL: time.Minute, Now: func() time.Time { return now }})
	k := x.Keyer()
	keys := k.Keys(nil, k.Root("", ""), seq(4*40, 0))
	x.Predict("e", keys[:10], 0)
	now = now.Add(20 * time.Second)
	x.Predict("e", keys, 10) // head fresh enough: only the tail is added, with a later expiry
	now = now.Add(45 * time.Second)
	if got := x.Match("e", keys); got != 0 {
		t.Errorf("head expired, tail alive: Match = %d, want 0", got)
	}
	x.Predict("e", keys, 0) // everything again
	if got := x.Match("e", keys); got != len(keys) {
		t.Fatalf("Match = %d, want %d", got, len(keys))
	}
	x.mu.RLock()
	e := x.engines["e"]
	x.mu.RUnlock()
	e.mu.Lock()
	e.blocks.Remove(keys[17])
	e.mu.Unlock()
	if got := x.Match("e", keys); got != 17 {
		t.Errorf("block 17 missing: Match = %d, want 17", got)
	}
	if x.At().Holds("e", keys[17]) || !x.At().Holds("e", keys[18]) || x.At().Holds("other", keys[0]) {
		t.Error("Holds must answer for the one block asked")
	}
	if got := x.At().Estimate("e", keys); got != len(keys) {
		t.Errorf("Estimate = %d: its binary search does not see the hole at 17, want %d", got, len(keys))
	}
}

// TestMatchCertificatesAgainstScan: under a random stream of predictions
// (right and wrong held counts), stored and removed event blocks, clears,
// a small LRU bound and a moving clock, Match (certificates, then a scan)
// answers what a probe of every block answers, and the probe table holds
// exactly the LRU's entries.
func TestMatchCertificatesAgainstScan(t *testing.T) {
	now := time.Unix(5000, 0)
	x := New(Config{Keyer: NewKeyer(2, ""), MaxBlocksPerEngine: 60, PredictTTL: 10 * time.Second, Now: func() time.Time { return now }})
	k := x.Keyer()
	rng := rand.New(rand.NewPCG(9, 10))
	// A few prompt families sharing heads, so chains overlap.
	var prompts [][]int
	for range 12 {
		p := seq(2*(1+rng.IntN(30)), 0)
		for i := rng.IntN(len(p)); i < len(p); i++ {
			p[i] = 1000 + rng.IntN(4)
		}
		prompts = append(prompts, p)
	}
	hashOf := map[uint64]uint64{} // key -> the engine hash stored for it
	next := uint64(1)
	for op := range 30000 {
		p := prompts[rng.IntN(len(prompts))]
		keys := k.Keys(nil, k.Root("", ""), p)
		switch r := rng.IntN(100); {
		case r < 40:
			held := x.Match("e", keys)
			if rng.IntN(5) == 0 {
				held = rng.IntN(len(keys) + 1) // a caller's wrong count
			}
			x.Predict("e", keys, held)
		case r < 60:
			n := 1 + rng.IntN(len(keys))
			st := StoredBlocks{BlockSize: 2, Tokens: p[:2*n]}
			for i := range n {
				st.Hashes = append(st.Hashes, next)
				hashOf[keys[i]] = next
				next++
			}
			_ = x.Store("e", st)
		case r < 85:
			x.Remove("e", []uint64{hashOf[keys[rng.IntN(len(keys))]]})
		case r < 86:
			x.Clear("e")
		default:
			now = now.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
		}
		e := x.engines["e"]
		if e == nil {
			continue
		}
		q := prompts[rng.IntN(len(prompts))]
		qk := k.Keys(nil, k.Root("", ""), q)
		want := 0
		for want < len(qk) && e.holds(qk[want], now.UnixNano()) {
			want++
		}
		if got := x.Match("e", qk); got != want {
			t.Fatalf("op %d: Match = %d, a probe of every block says %d", op, got, want)
		}
		if op%500 == 0 {
			if e.expiry.n != e.blocks.Len() {
				t.Fatalf("op %d: %d probe entries for %d LRU entries", op, e.expiry.n, e.blocks.Len())
			}
			for _, key := range e.blocks.Keys() {
				b, _ := e.blocks.Peek(key)
				if exp, ok := e.expiry.get(key); key != 0 && (!ok || exp != b.expires) {
					t.Fatalf("op %d: probe table has %d %v for a block expiring at %d", op, exp, ok, b.expires)
				}
			}
		}
	}
}

// TestIndexBoundedUnderEventSoak is a long random stream of what engines
// and the router do: chained BlockStored events (parents known, unknown,
// or evicted), BlockRemoved of known and unknown hashes, clears,
// predictions and a clock running through many TTLs, over a few engines.
// Every engine's LRU stays within the bound, its engine-hash map and probe
// table mirror no more than the LRU holds, and the probe table's memory
// stays within its growth bound.
func TestIndexBoundedUnderEventSoak(t *testing.T) {
	const bound = 300
	now := time.Unix(1e6, 0)
	k := NewKeyer(4, "")
	x := New(Config{Keyer: k, MaxBlocksPerEngine: bound, PredictTTL: time.Second, Now: func() time.Time { return now }})
	rng := rand.New(rand.NewPCG(11, 12))
	engines := []string{"a", "b", "c", "d"}
	var known [4][]uint64 // engine hashes stored per engine, some long evicted
	next := uint64(1)
	peak := 0
	check := func(op int) {
		t.Helper()
		for name, e := range x.engines {
			peak = max(peak, e.blocks.Len())
			switch n := e.blocks.Len(); {
			case n > bound:
				t.Fatalf("op %d, engine %s: %d entries, bound %d", op, name, n, bound)
			case len(e.byHash) > n:
				t.Fatalf("op %d, engine %s: %d engine hashes for %d entries", op, name, len(e.byHash), n)
			case e.expiry.n != n:
				t.Fatalf("op %d, engine %s: probe table has %d entries, LRU %d", op, name, e.expiry.n, n)
			case len(e.expiry.slots) > 4*bound:
				t.Fatalf("op %d, engine %s: probe table of %d slots for a bound of %d", op, name, len(e.expiry.slots), bound)
			}
		}
	}
	for op := range 200000 {
		ei := rng.IntN(len(engines))
		engine := engines[ei]
		switch r := rng.IntN(100); {
		case r < 35: // a prompt stored, continuing a known block or from the root
			n := 1 + rng.IntN(8)
			st := StoredBlocks{BlockSize: 4, Tokens: seq(4*n, rng.IntN(1<<16))}
			if h := known[ei]; len(h) > 0 && rng.IntN(2) == 0 {
				st.Parent, st.HasParent = h[rng.IntN(len(h))], true
			}
			for range n {
				st.Hashes = append(st.Hashes, next)
				known[ei] = append(known[ei], next)
				next++
			}
			err := x.Store(engine, st)
			if err != nil && !errors.Is(err, ErrUnknownParent) {
				t.Fatal(err)
			}
		case r < 60: // evictions, of blocks the index has or long lost
			var hs []uint64
			for range 1 + rng.IntN(6) {
				if h := known[ei]; len(h) > 0 {
					hs = append(hs, h[rng.IntN(len(h))])
				}
				hs = append(hs, rng.Uint64())
			}
			x.Remove(engine, hs)
		case r < 90: // a routed request's prediction
			keys := k.Keys(nil, k.Root("", ""), seq(4*(1+rng.IntN(30)), rng.IntN(1<<10)))
			x.Predict(engine, keys, x.Match(engine, keys))
		case r < 91:
			x.Clear(engine)
			known[ei] = known[ei][:0]
		default:
			now = now.Add(time.Duration(rng.IntN(400)) * time.Millisecond)
		}
		if len(known[ei]) > 4*bound { // the stream's own memory, not the index's
			known[ei] = append(known[ei][:0], known[ei][len(known[ei])-bound:]...)
		}
		if op%1000 == 0 {
			check(op)
		}
	}
	check(-1)
	if peak < bound {
		t.Errorf("no engine reached the bound (peak %d of %d): the soak did not test eviction", peak, bound)
	}
	if n := x.Len(); n > len(engines)*bound {
		t.Fatalf("index holds %d entries for %d engines of bound %d", n, len(engines), bound)
	}
}

// TestRenewedCertificateKeepsThePrefixExpiry: after a removal voids the
// certificates, a prediction renews the held prefix's by probing it; the
// renewed certificate must expire with the prefix's earliest block, not
// its last.
func TestRenewedCertificateKeepsThePrefixExpiry(t *testing.T) {
	now := time.Unix(1000, 0)
	x := New(Config{Keyer: NewKeyer(4, ""), PredictTTL: 10 * time.Second, Now: func() time.Time { return now }})
	k := x.Keyer()
	keys := k.Keys(nil, k.Root("", ""), seq(4*10, 0))
	x.Predict("e", keys[:5], 0) // blocks 0-4 expire at 1010
	now = now.Add(time.Second)
	x.Predict("e", keys, 5) // 5-9 at 1011
	other := StoredBlocks{Hashes: []uint64{7}, Tokens: seq(4, 900), BlockSize: 4}
	if err := x.Store("e", other); err != nil {
		t.Fatal(err)
	}
	x.Remove("e", other.Hashes) // a removal: every certificate void
	now = now.Add(time.Second)
	x.Predict("e", keys, 10) // renews block 9's certificate by probing 0-9
	if got := x.Match("e", keys); got != 10 {
		t.Fatalf("Match = %d, want 10", got)
	}
	now = time.Unix(1010, 5e8) // 0-4 expired, 5-9 not
	if got := x.Match("e", keys); got != 0 {
		t.Errorf("the prefix's head expired: Match = %d, want 0", got)
	}
}

// BenchmarkMatch32k is Match of a 32k-token prompt an engine holds whole,
// confirmed by events: with its certificates valid, after a removal voided
// them (a scan of every block), and after the next prediction renewed the
// last block's.
func BenchmarkMatch32k(b *testing.B) {
	k := NewKeyer(16, "")
	tokens := seq(32768, 0)
	keys := k.Keys(nil, k.Root("", ""), tokens)
	setup := func() *Index {
		x := New(Config{Keyer: k})
		st := StoredBlocks{BlockSize: 16, Tokens: tokens}
		for i := range keys {
			st.Hashes = append(st.Hashes, uint64(i+1))
		}
		if err := x.Store("e", st); err != nil {
			b.Fatal(err)
		}
		return x
	}
	removal := func(x *Index) {
		if err := x.Store("e", StoredBlocks{BlockSize: 16, Tokens: seq(16, 1e6), Hashes: []uint64{1e9}}); err != nil {
			b.Fatal(err)
		}
		x.Remove("e", []uint64{1e9})
	}
	for _, c := range []struct {
		name  string
		after func(*Index)
	}{
		{"certified", func(*Index) {}},
		{"after-removal", removal},
		{"after-removal-predicted", func(x *Index) { removal(x); x.Predict("e", keys, len(keys)) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			x := setup()
			c.after(x)
			for b.Loop() {
				if x.Match("e", keys) != len(keys) {
					b.Fatal("not held")
				}
			}
		})
	}
}
