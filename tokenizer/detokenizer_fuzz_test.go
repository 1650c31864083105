package tokenizer

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// FuzzDetokenizer drives random streams — random prompt seed, options,
// ids (negative, past the vocabulary, byte tokens, specials) and chunking —
// through the detokenizer and checks every step's text and state against
// the literal transcription of vLLM, and that chunked decoding with JSON
// state round trips gives the same text. It always fuzzes the hand-checkable
// fake tokenizers, and qwen3 (byte-level) and gemma3 (byte fallback) when
// the model cache is present.
func FuzzDetokenizer(f *testing.F) {
	vocabs := []detokVocab{detokFake{}, detokFake{stripLeadingSpace: true}}
	for _, name := range []string{"qwen3", "gemma3"} {
		path := filepath.Join(testenv.RepoRoot(f), ".cache", "models", name, "tokenizer.json")
		if _, err := os.Stat(path); err != nil {
			if testenv.InCI() {
				f.Fatalf("missing %s (CI=true): run `make models`", path)
			}
			f.Logf("*** MISSING TEST FIXTURE %s: fuzzing the fake tokenizers only; run `make models`", path)
			continue
		}
		vocabs = append(vocabs, detokLoadModel(f, name))
	}

	// Seeds use the fake tokenizer (vocab byte 0 or 1).
	b := func(x int) int { return fakeByte(byte(x)) }
	f.Add(detokFuzzSeed(0, 0, 0, fakeHello, b(0xE2), b(0x82), b(0xAC), b(0x80), fakeBang))
	f.Add(detokFuzzSeed(1, 0, 0, b(0xE2), fakeEOS, b(0x82), b(0xAC), fakeLen, -1, fakeHole))
	f.Add(detokFuzzSeed(16, 1, 2, fakeBOS, fakeHello, fakeWorld, fakeBang))
	f.Add(detokFuzzSeed(16, 0, 2, fakeHello, b(0xF0), b(0x9F), b(0x98), b(0x80), fakeBang))
	f.Add(detokFuzzSeed(4, 0, 0, fakeHello, fakeTool, fakeWorld, fakeEOS))
	f.Add(detokFuzzSeed(6|1, 0, 0, fakeHello, fakeTool, fakeWorld, fakeEOS))
	f.Add(detokFuzzSeed(8|1, 1, 0, fakeHello, fakeTool, fakeE, fakeSpace, fakeWorld))

	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		flags, v := data[0], vocabs[int(data[1])%len(vocabs)]
		opts := DetokOptions{
			SkipSpecialTokens:          flags&1 != 0,
			SpacesBetweenSpecialTokens: flags&2 != 0,
			// The slow path rebuilds the added-token set per call in the
			// reference; keep it to tokenizers with few added tokens.
			SlowTokenizer: flags&4 != 0 && len(v.AddedTokens()) < 100,
		}
		if flags&8 != 0 {
			opts.IsSpecial = func(id int) bool { return id%7 == 0 }
		}
		rest := data[2:]
		promptLen := 0
		if flags&16 != 0 && len(rest) > 0 {
			promptLen, rest = int(rest[0])%12, rest[1:]
		}
		var ids []int
		for ; len(rest) >= 3; rest = rest[3:] {
			n := int(rest[0])<<16 | int(rest[1])<<8 | int(rest[2])
			ids = append(ids, n%(v.Len()+3)-1)
		}
		promptLen = min(promptLen, len(ids))
		prompt, out := ids[:promptLen], ids[promptLen:]
		checkDetokAgainstRef(t, v, opts, prompt, out)
		want := detokStepAll(v, opts, prompt, out)
		checkDetokChunking(t, v, opts, prompt, out, want, rand.New(rand.NewPCG(uint64(len(data)), uint64(flags))))
	})
}

// detokFuzzSeed encodes a fuzz input: flags, vocabulary index, prompt
// length (read when flags&16), then each id as 3 bytes holding id+1.
func detokFuzzSeed(flags, vocab byte, promptLen int, ids ...int) []byte {
	data := []byte{flags, vocab}
	if flags&16 != 0 {
		data = append(data, byte(promptLen))
	}
	for _, id := range ids {
		n := id + 1
		data = append(data, byte(n>>16), byte(n>>8), byte(n))
	}
	return data
}
