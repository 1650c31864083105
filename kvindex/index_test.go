package kvindex

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
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
