package tokenizer

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestDetokenizerFastStepMatchesSlow runs every byte-level model's
// detokenizer with and without fastStep over random streams that mix
// ordinary text, special tokens, byte fragments of multi-byte characters
// and out-of-range ids: every step's text and every state must agree.
func TestDetokenizerFastStepMatchesSlow(t *testing.T) {
	texts := []string{
		"Hello, world! Step 1: check the layout.\n",
		"naïve café ✓ 日本語のテキスト 😀🎉 done",
		"<think>\nreason</think>\n\n<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>",
	}
	for _, m := range detokModelNames {
		t.Run(m.name, func(t *testing.T) {
			tok := detokLoadModel(t, m.name)
			if !tok.byteLevelMode() {
				d := NewDetokenizer(tok, DetokOptions{}, nil)
				if d.pieces != nil {
					t.Fatal("fast path enabled for a decoder that is not exactly ByteLevel")
				}
				t.Skipf("%s: decoder is not exactly ByteLevel; no fast path", m.name)
			}
			var pool []int
			for _, s := range texts {
				pool = append(pool, tok.Encode(s, false)...)
			}
			// Single bytes of emoji and CJK characters, special ids, ids
			// outside the vocabulary.
			for _, s := range []string{"😀", "日", "é"} {
				for i := 0; i < len(s); i++ {
					if id, ok := tok.TokenToID(byteLevelEncode(s[i : i+1])); ok {
						pool = append(pool, id)
					}
				}
			}
			ordinary := len(pool)
			for id := range tok.Len() {
				if tok.IsSpecial(id) {
					pool = append(pool, id)
					if len(pool) > 400 {
						break
					}
				}
			}
			pool = append(pool, -1, tok.Len(), tok.Len()+7)
			rng := rand.New(rand.NewPCG(1, uint64(len(m.name))))
			prompt := tok.Encode("<|im_start|>user\nwrite it<|im_end|>\n", false)
			for trial := range 200 {
				opts := DetokOptions{SkipSpecialTokens: trial%2 == 1}
				var seed []int
				if trial%3 != 0 {
					seed = prompt
				}
				fast := NewDetokenizer(tok, opts, seed)
				slow := NewDetokenizer(tok, opts, seed)
				slow.pieces = nil
				n := 1 + rng.IntN(60)
				ids := make([]int, n)
				for i := range ids {
					if rng.IntN(4) == 0 {
						ids[i] = pool[rng.IntN(len(pool))]
					} else {
						// Mostly ordinary text, as the fast path sees it.
						ids[i] = pool[rng.IntN(ordinary)]
					}
				}
				for i, id := range ids {
					got, want := fast.Step(id), slow.Step(id)
					if got != want {
						t.Fatalf("trial %d step %d (id %d): fast %q, slow %q (ids %v)", trial, i, id, got, want, ids[:i+1])
					}
					if fs, ss := fast.State(), slow.State(); !reflect.DeepEqual(fs, ss) {
						t.Fatalf("trial %d step %d (id %d): fast state %+v, slow %+v", trial, i, id, fs, ss)
					}
				}
			}
		})
	}
}

// TestDetokenizerFastStepAllocs pins the streaming hot path: one ordinary
// token pushed alone allocates nothing.
func TestDetokenizerFastStepAllocs(t *testing.T) {
	tok := detokLoadModel(t, "qwen3")
	ids := tok.Encode("Step 1: check the file layout. Step 2: write the code.", false)
	d := NewDetokenizer(tok, DetokOptions{}, nil)
	d.Push(ids[:1])
	i := 1
	allocs := testing.AllocsPerRun(100, func() {
		d.Push(ids[i%len(ids) : i%len(ids)+1])
		i++
	})
	if allocs != 0 {
		t.Fatalf("one-token Push allocates %.1f times", allocs)
	}
}
