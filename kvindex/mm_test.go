package kvindex

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/vrender/vrender/features"
)

// mmCase is one prompt of testdata/mm_extra_keys.json, written by
// gen_mm_fixtures.py from vLLM's _gen_mm_extra_hash_keys.
type mmCase struct {
	Name      string `json:"name"`
	BlockSize int    `json:"block_size"`
	NumTokens int    `json:"num_tokens"`
	Items     []struct {
		Hash   string `json:"hash"`
		Offset int    `json:"offset"`
		Length int    `json:"length"`
	} `json:"items"`
	Blocks [][][2]any `json:"blocks"`
}

func (c mmCase) items() []MMItem {
	out := make([]MMItem, len(c.Items))
	for i, it := range c.Items {
		out[i] = MMItem{Hash: it.Hash, Offset: it.Offset, Length: it.Length}
	}
	return out
}

func TestMMKeysMatchVLLM(t *testing.T) {
	b, err := os.ReadFile("testdata/mm_extra_keys.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []mmCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 40 {
		t.Fatalf("%d cases", len(cases))
	}
	for _, c := range cases {
		items := c.items()
		if n := c.NumTokens / c.BlockSize; len(c.Blocks) != n {
			t.Fatalf("%s: fixture has %d blocks, want %d", c.Name, len(c.Blocks), n)
		}
		for i, want := range c.Blocks {
			got := MMKeys(nil, items, i*c.BlockSize, (i+1)*c.BlockSize)
			w := make([]MMKey, len(want))
			for j, k := range want {
				w[j] = MMKey{Hash: k[0].(string), Offset: int(k[1].(float64))}
			}
			if !slices.Equal(got, w) {
				t.Errorf("%s block %d: %v, want %v", c.Name, i, got, w)
			}
		}
	}
}

// keysMMSlow is KeysMM by its definition: every block keyed alone.
func keysMMSlow(k Keyer, root uint64, tokens []int, items []MMItem) []uint64 {
	var out []uint64
	parent := root
	for i := range len(tokens) / k.blockSize {
		s := i * k.blockSize
		parent = foldMM(nil, k.Next(parent, tokens[s:s+k.blockSize]), MMKeys(nil, items, s, s+k.blockSize))
		out = append(out, parent)
	}
	return out
}

func TestKeysMMAgainstBlockByBlock(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 1))
	for _, bs := range []int{1, 4, 16, 32} {
		k := NewKeyer(bs, "m")
		for range 200 {
			n := r.IntN(700)
			tokens := make([]int, n)
			for i := range tokens {
				tokens[i] = r.IntN(1000)
			}
			var items []MMItem
			for pos := r.IntN(50); pos < n && len(items) < 5; {
				l := 1 + r.IntN(120)
				if pos+l > n {
					break
				}
				items = append(items, MMItem{Hash: string(rune('a' + r.IntN(3))), Offset: pos, Length: l})
				pos += l + r.IntN(60)
			}
			root := k.Root("", "")
			got := k.KeysMM(nil, root, tokens, items)
			if want := keysMMSlow(k, root, tokens, items); !slices.Equal(got, want) {
				t.Fatalf("bs %d, %d tokens, items %v: KeysMM differs from block-by-block keys", bs, n, items)
			}
			if len(items) == 0 && !slices.Equal(got, k.Keys(nil, root, tokens)) {
				t.Fatal("KeysMM without items differs from Keys")
			}
		}
	}
}

// TestImagesOfOneLayoutNeverShareBlocks: two images of the same size render
// to the same placeholder tokens; only their hashes tell them apart, from
// the first block the image touches to the end of the prompt. The same
// image in the next turn's longer prompt matches the whole previous turn.
func TestImagesOfOneLayoutNeverShareBlocks(t *testing.T) {
	k := NewKeyer(16, "m")
	x := New(Config{Keyer: k})
	prompt := func(n int) []int {
		tokens := seq(n, 100)
		for i := 15; i < 15+1196; i++ {
			tokens[i] = 151655 // <|image_pad|>
		}
		return tokens
	}
	root := k.Root("", "")
	a := []MMItem{{Hash: "aaaa", Offset: 15, Length: 1196}}
	b := []MMItem{{Hash: "bbbb", Offset: 15, Length: 1196}}
	turn1 := prompt(1240)
	keysA := k.KeysMM(nil, root, turn1, a)
	keysB := k.KeysMM(nil, root, turn1, b)
	if keysA[0] == keysB[0] {
		t.Fatal("the blocks holding different images share a key")
	}
	x.Predict("e", keysA, 0)
	if got := x.Match("e", keysB); got != 0 {
		t.Fatalf("image b matched %d of image a's blocks", got)
	}
	if plain := k.Keys(nil, root, turn1); x.Match("e", plain) != 0 {
		t.Fatal("the same tokens without the image matched the image's blocks")
	}
	turn2 := append(prompt(1240), seq(100, 5000)...)
	if got, want := x.Match("e", k.KeysMM(nil, root, turn2, a)), len(keysA); got != want {
		t.Fatalf("same image next turn: matched %d blocks, want %d", got, want)
	}
}

// TestStoredEventsCarryImages: blocks keyed from BlockStored events with
// their extra keys match the request's KeysMM, and only those.
func TestStoredEventsCarryImages(t *testing.T) {
	k := NewKeyer(4, "m")
	x := New(Config{Keyer: k})
	tokens := seq(16, 100)
	items := []MMItem{{Hash: "img", Offset: 2, Length: 7}}
	var mm [][]MMKey
	for i := range 4 {
		mm = append(mm, MMKeys(nil, items, 4*i, 4*i+4))
	}
	if err := x.Store("e", StoredBlocks{Hashes: []uint64{1, 2}, Tokens: tokens[:8], BlockSize: 4, MM: mm[:2]}); err != nil {
		t.Fatal(err)
	}
	if err := x.Store("e", StoredBlocks{Parent: 2, HasParent: true, Hashes: []uint64{3, 4}, Tokens: tokens[8:], BlockSize: 4, MM: mm[2:]}); err != nil {
		t.Fatal(err)
	}
	root := k.Root("", "")
	if got := x.Match("e", k.KeysMM(nil, root, tokens, items)); got != 4 {
		t.Fatalf("Match = %d, want 4", got)
	}
	other := []MMItem{{Hash: "other", Offset: 2, Length: 7}}
	if got := x.Match("e", k.KeysMM(nil, root, tokens, other)); got != 0 {
		t.Fatalf("another image matched %d blocks", got)
	}
	if err := x.Store("e", StoredBlocks{Hashes: []uint64{9}, Tokens: tokens[:4], BlockSize: 4, MM: mm}); err == nil {
		t.Fatal("extra keys for more blocks than the event has were accepted")
	}
}

func TestFeatureItemsInPromptOrder(t *testing.T) {
	f := features.Features{Modalities: []features.Modality{
		{Name: "image", Hashes: []string{"i0", "i1"}, Placeholders: []features.Placeholder{{Offset: 20, Length: 4}, {Offset: 40, Length: 2}}},
		{Name: "video", Hashes: []string{"v0"}, Placeholders: []features.Placeholder{{Offset: 5, Length: 10}}},
	}}
	want := []MMItem{{"v0", 5, 10}, {"i0", 20, 4}, {"i1", 40, 2}}
	if got := FeatureItems(&f); !slices.Equal(got, want) {
		t.Fatalf("FeatureItems = %v, want %v", got, want)
	}
}

// FuzzKeysMM: whatever items a caller passes (unsorted, overlapping,
// negative, past the prompt), KeysMM terminates and equals the
// block-by-block definition.
func FuzzKeysMM(f *testing.F) {
	f.Add(uint8(4), uint16(40), []byte{3, 9, 20, 5})
	f.Add(uint8(16), uint16(300), []byte{200, 10, 5, 100, 0, 255})
	f.Fuzz(func(t *testing.T, bs uint8, n uint16, raw []byte) {
		k := NewKeyer(int(bs%64)+1, "m")
		tokens := seq(int(n%2048), 7)
		var items []MMItem
		for i := 0; i+1 < len(raw) && len(items) < 16; i += 2 {
			items = append(items, MMItem{Hash: string(rune('a' + i%5)), Offset: int(int8(raw[i])) * 8, Length: int(int8(raw[i+1])) * 3})
		}
		root := k.Root("", "")
		if got, want := k.KeysMM(nil, root, tokens, items), keysMMSlow(k, root, tokens, items); !slices.Equal(got, want) {
			t.Fatalf("items %v: KeysMM differs from the definition", items)
		}
	})
}

// BenchmarkKeysMM32k: BenchmarkKeys32k's prompt holding four 1196-token
// images (about 300 of its 2048 blocks carry a key).
func BenchmarkKeysMM32k(b *testing.B) {
	k := NewKeyer(16, "m")
	tokens := seq(32768, 100)
	var items []MMItem
	for i := range 4 {
		items = append(items, MMItem{Hash: strings.Repeat("4f0c", 16), Offset: 15 + 8000*i, Length: 1196})
	}
	dst := make([]uint64, 0, 2048)
	root := k.Root("", "")
	b.SetBytes(int64(len(tokens)))
	for b.Loop() {
		dst = k.KeysMM(dst[:0], root, tokens, items)
	}
}
