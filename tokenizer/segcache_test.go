package tokenizer

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

// segPool holds segment texts the conversations draw from, so that segments
// repeat (the cache hits) and vary (it misses): unicode, whitespace at both
// edges, newlines, digits, code.
var segPool = []string{
	"You are a helpful assistant.", " Hello, how are you today? ", "\n\nSure! Here is the code:\n```go\nfunc main() {}\n```\n",
	"  leading and trailing spaces  ", "\t\ttabs\tand\nnewlines\n", "日本語のテキストと絵文字 🎉🎉 mixed", "Ünïcödé ñ café naïve — “quotes”",
	"1234567890 3.14159 1e-9 0x1F", "   ", "\n", "a", " user", "assistant\n", "ا لعربية مرحبا بالعالم", "   multiple   spaces   inside   ",
	"<not-a-token> </also not>", "line one\r\nline two\r\n", "emoji 👩‍👩‍👧‍👦 zwj and 🇯🇵 flags", "\u00a0nbsp\u00a0edges\u00a0", "x\u200by",
}

// randomConversation renders-like text: segments from segPool (sometimes
// fresh) with added tokens between them, whitespace on either side of a
// token so that lstrip/rstrip have something to eat.
func randomConversation(rng *rand.Rand, added []string) string {
	var b strings.Builder
	n := 1 + rng.IntN(24)
	for range n {
		switch rng.IntN(8) {
		case 0:
			fmt.Fprintf(&b, "fresh segment %d with words %x", rng.Uint32(), rng.Uint64())
		case 1:
			b.WriteString(segPool[rng.IntN(len(segPool))] + segPool[rng.IntN(len(segPool))])
		case 2:
			// nothing: two tokens side by side
		default:
			b.WriteString(segPool[rng.IntN(len(segPool))])
		}
		if len(added) > 0 && rng.IntN(4) != 0 {
			ws := []string{"", " ", "  ", "\n", " \n "}
			b.WriteString(ws[rng.IntN(len(ws))])
			b.WriteString(added[rng.IntN(len(added))])
			b.WriteString(ws[rng.IntN(len(ws))])
		}
	}
	return b.String()
}

func addedContents(t *Tokenizer, rng *rand.Rand, max int) []string {
	var all []string
	for _, a := range t.added.list {
		all = append(all, a.Content)
	}
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	return all[:min(max, len(all))]
}

// checkSegmentCache encodes conversations with the cache cold, warm and
// shared by concurrent goroutines, id for id against the uncached encoder.
func checkSegmentCache(t *testing.T, tok, ref *Tokenizer, convs []string) {
	t.Helper()
	want := make([][]int, len(convs))
	for i, c := range convs {
		want[i] = ref.Encode(c, true)
	}
	check := func(phase string, i int) {
		if got := tok.Encode(convs[i], true); !slices.Equal(got, want[i]) {
			t.Errorf("%s: conversation %d %q:\n got %v\nwant %v", phase, i, convs[i], got, want[i])
		}
	}
	for _, phase := range []string{"cold", "warm"} {
		for i := range convs {
			check(phase, i)
		}
	}
	// Small bound: concurrent puts, hits and evictions all at once.
	tok.SetSegmentCacheSize(64 << 10)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for k := range len(convs) * 2 {
				check(fmt.Sprintf("concurrent %d", g), (k*7+g*13)%len(convs))
			}
		})
	}
	wg.Wait()
	if st := tok.SegmentCacheStats(); st.Hits == 0 || st.Misses == 0 {
		t.Errorf("stats %+v: the test did not exercise both hits and misses", st)
	}
}

func TestSegmentCacheModels(t *testing.T) {
	for _, name := range []string{"qwen3", "llama3_1", "deepseek_v3", "gptoss", "gemma3"} {
		t.Run(name, func(t *testing.T) {
			tok, ref := loadModel(t, name), loadModel(t, name)
			ref.SetSegmentCacheSize(0)
			if st := tok.SegmentCacheStats(); !st.Enabled {
				t.Fatalf("cache not enabled by default: %+v", st)
			}
			rng := rand.New(rand.NewPCG(13, uint64(len(name))))
			added := addedContents(tok, rng, 40)
			convs := make([]string, 150)
			for i := range convs {
				convs[i] = randomConversation(rng, added)
			}
			// Multi-turn: each turn repeats the earlier ones.
			for i := 1; i < 20; i++ {
				convs = append(convs, convs[len(convs)-1]+convs[i])
			}
			checkSegmentCache(t, tok, ref, convs)
		})
	}
}

// TestSegmentCacheVariants runs the check over synthesised tokenizers whose
// added tokens and pre-tokenizers make segments depend on their position
// or neighbours, and checks that the keying handles each.
func TestSegmentCacheVariants(t *testing.T) {
	// "▁" and a merge with it, so that where Metaspace prepends shows in the ids.
	vocab := append(asciiVocab(), "▁", "▁a", "\n", "\t")
	model := testBPE(vocab, []string{"▁ a"}, nil)
	tokens := func(lstrip, rstrip, single, normalized bool) []AddedToken {
		var out []AddedToken
		for i, c := range []string{"<|im_start|>", "<|im_end|>", "<tok>", "ab", "▁x"} {
			out = append(out, AddedToken{ID: len(vocab) + i, Content: c, LStrip: lstrip, RStrip: rstrip,
				SingleWord: single, Normalized: normalized, Special: i < 2})
		}
		return out
	}
	metaspace := func(scheme string) string {
		return `{"type":"Metaspace","replacement":"▁","prepend_scheme":"` + scheme + `","split":true}`
	}
	cases := []struct {
		name       string
		cfg        testTokenizerJSON
		firstKeyed bool
	}{
		{"bytelevel prefix space", testTokenizerJSON{preTokenizer: `{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true}`,
			added: tokens(false, false, false, false)}, false},
		{"metaspace first", testTokenizerJSON{preTokenizer: metaspace("first"), added: tokens(false, false, false, false)}, true},
		{"metaspace always", testTokenizerJSON{preTokenizer: metaspace("always"), added: tokens(false, false, false, false)}, false},
		{"metaspace first lstrip rstrip", testTokenizerJSON{preTokenizer: metaspace("first"), added: tokens(true, true, false, false)}, true},
		{"single word", testTokenizerJSON{preTokenizer: `{"type":"Whitespace"}`, added: tokens(false, false, true, false)}, false},
		{"normalized tokens, prepend normalizer", testTokenizerJSON{
			normalizer:   `{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]}`,
			preTokenizer: `{"type":"Split","pattern":{"String":"▁"},"behavior":"MergedWithNext","invert":false}`,
			added:        tokens(false, false, false, true)}, false},
		{"strip normalizer lstrip tokens", testTokenizerJSON{normalizer: `{"type":"Strip","strip_left":true,"strip_right":true}`,
			preTokenizer: `{"type":"WhitespaceSplit"}`, added: tokens(true, false, false, true)}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.model = model
			tok, ref := c.cfg.build(t), c.cfg.build(t)
			ref.SetSegmentCacheSize(0)
			if tok.segFirstKey != c.firstKeyed || tok.segCacheOff != nil {
				t.Fatalf("firstKeyed %v off %v, want firstKeyed %v", tok.segFirstKey, tok.segCacheOff, c.firstKeyed)
			}
			rng := rand.New(rand.NewPCG(7, uint64(len(c.name))))
			var added []string
			for _, a := range tok.added.list {
				added = append(added, a.Content)
			}
			var convs []string
			for range 200 {
				convs = append(convs, randomConversation(rng, added))
			}
			// The same text at offset 0 and after a token.
			for _, s := range segPool {
				convs = append(convs, s, "<tok>"+s, s+"<tok>"+s, " <tok> "+s)
			}
			checkSegmentCache(t, tok, ref, convs)
		})
	}
}

// positionalPreTok stands for a pre-tokenizer segmentPolicy does not know.
type positionalPreTok struct{ whitespacePreTok }

type positionalNorm struct{ lowercaseNormalizer }

func TestSegmentCacheDisabledForUnknownComponents(t *testing.T) {
	tok := testTokenizerJSON{preTokenizer: `{"type":"Whitespace"}`}.build(t)
	if _, err := segmentPolicy(nil, []preTokenizer{positionalPreTok{}}); err == nil {
		t.Error("unknown pre-tokenizer: cache allowed")
	}
	if _, err := segmentPolicy(normalizerSeq{lowercaseNormalizer{}, positionalNorm{}}, nil); err == nil {
		t.Error("unknown normalizer in a sequence: cache allowed")
	}
	tok.preTokenizers = append(tok.preTokenizers, positionalPreTok{})
	tok.init()
	if st := tok.SegmentCacheStats(); st.Enabled || st.Disabled == nil {
		t.Errorf("stats %+v: want disabled with a reason", st)
	}
	tok.SetSegmentCacheSize(1 << 20)
	if tok.SegmentCacheStats().Enabled {
		t.Error("SetSegmentCacheSize enabled a cache the policy refused")
	}
}

func TestSegmentCacheEviction(t *testing.T) {
	c := newSegmentCache(segShards * 4096)
	ids := make([]int, 100)
	key := func(s string, first bool) (segKey, uint64) {
		k := segKey{text: s, first: first}
		return k, c.hash(k)
	}
	lookup := func(s string, first bool) bool {
		k, h := key(s, first)
		_, ok := c.get(k, h, nil)
		return ok
	}
	k, h := key("admitted on the second miss", false)
	c.put(k, h, ids, false)
	if _, ok := c.get(k, h, nil); ok {
		t.Error("stored on the first miss")
	}
	c.put(k, h, ids, false)
	if _, ok := c.get(k, h, nil); !ok {
		t.Error("not stored on the second miss")
	}
	k, h = key("admitted on the first miss of a continued text", false)
	c.put(k, h, ids, true)
	if _, ok := c.get(k, h, nil); !ok {
		t.Error("admit: not stored on the first miss")
	}
	for i := range 1000 {
		k, h := key(fmt.Sprintf("segment number %d", i), false)
		c.put(k, h, ids, false)
		c.put(k, h, ids, false)
	}
	if _, _, b := c.stats(); b > segShards*4096 || b == 0 {
		t.Errorf("bytes %d, want within (0, %d]", b, segShards*4096)
	}
	if ok := lookup("segment number 999", false); !ok {
		t.Error("most recent entry evicted")
	}
	if ok := lookup("segment number 0", false); ok {
		t.Error("oldest entry kept past the bound")
	}
	if ok := lookup("segment number 999", true); ok {
		t.Error("first-keyed lookup hit the plain entry")
	}
}

// BenchmarkSegmentCacheMiss is what a cold segment pays on top of its
// encoding: the hash, the failed lookup and the admission filter's store.
func BenchmarkSegmentCacheMiss(b *testing.B) {
	c := newSegmentCache(DefaultSegmentCacheBytes)
	texts := make([]string, 4096)
	for i := range texts {
		texts[i] = fmt.Sprintf("%06d %s", i, strings.Repeat("chat message text ", 22))
	}
	ids := make([]int, 0, 128)
	out := make([]int, 100)
	i := 0
	for b.Loop() {
		k := segKey{text: texts[i%len(texts)]}
		h := c.hash(k)
		if _, ok := c.get(k, h, ids[:0]); !ok {
			c.put(k, h, out, false)
		}
		i++
		if i%len(texts) == 0 {
			b.StopTimer()
			c = newSegmentCache(DefaultSegmentCacheBytes)
			b.StartTimer()
		}
	}
}

func TestSegmentCacheHashCollision(t *testing.T) {
	c := newSegmentCache(DefaultSegmentCacheBytes)
	a, b := segKey{text: "the first segment's text"}, segKey{text: "another segment, same hash"}
	const h = 42 // as if both hashed alike
	c.put(a, h, []int{1, 2}, true)
	if got, ok := c.get(b, h, nil); ok {
		t.Fatalf("get(b) hit a's entry: %v", got)
	}
	c.put(b, h, []int{3}, true)
	if _, ok := c.get(a, h, nil); ok {
		t.Error("a still cached after b replaced it")
	}
	if got, ok := c.get(b, h, nil); !ok || !slices.Equal(got, []int{3}) {
		t.Errorf("get(b) = %v, %v; want [3], true", got, ok)
	}
	if _, ok := c.get(segKey{text: b.text, first: true}, h, nil); ok {
		t.Error("a first-keyed lookup hit the plain entry")
	}
	if _, _, bytes := c.stats(); bytes != entryCost(len(b.text), 1) {
		t.Errorf("bytes %d, want one entry's %d", bytes, entryCost(len(b.text), 1))
	}
}

// TestSegmentCachePointers checks that a full cache holds a few pointers
// per entry for the garbage collector to follow (segEntry's slab layout).
func TestSegmentCachePointers(t *testing.T) {
	c := newSegmentCache(DefaultSegmentCacheBytes)
	const n = 20000
	for i := range n {
		k := segKey{text: fmt.Sprintf("segment %d of a long enough text", i)}
		c.put(k, c.hash(k), []int{i, i + 1}, true)
	}
	pc := pointerCounter{seen: map[uintptr]bool{}, by: map[string]int{}}
	pc.walk(reflect.ValueOf(c), "segmentCache")
	if pc.total > 3*n {
		t.Errorf("%d pointers for %d entries, want at most %d: %v", pc.total, n, 3*n, pc.top(5))
	}
}
