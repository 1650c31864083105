package fleet

import (
	"testing"

	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/kvevents"
	"github.com/vrender/vrender/kvindex"
	"github.com/vrender/vrender/protocol"
)

// imagePrompt is a Qwen-style prompt of n tokens with one image's
// placeholder (1196 pad tokens, a 1288x728 image) at offset 15: every image
// of that size renders to these same tokens.
func imagePrompt(n int) *protocol.GenerateRequest {
	g := prompt(n, 100)
	for i := 15; i < 15+1196; i++ {
		g.TokenIDs[i] = 151655
	}
	return g
}

func image(hash string) []kvindex.MMItem {
	return []kvindex.MMItem{{Hash: hash, Offset: 15, Length: 1196}}
}

// TestPrefixRoutingKeysImages feeds a request's mm_hashes and placeholders
// to the router directly, as the orchestrator will: another image of the
// same size matches nothing of the first, the same image next turn matches
// its whole previous prompt and goes back to its engine.
func TestPrefixRoutingKeysImages(t *testing.T) {
	r, _ := NewRouter(RouterConfig{Policy: RoutingPrefix, Index: kvindex.New(kvindex.Config{})})
	p := routedPool(t, r, 2)
	a := takeMM(t, p, imagePrompt(1240), image("aaaa"))
	release(p, a)
	engineA := p.members[a].client.URL()

	match := func(g *protocol.GenerateRequest, mm []kvindex.MMItem) int {
		rt := r.begin(g, mm)
		defer r.end(&rt)
		return r.index.Match(engineA, rt.keys)
	}
	if got := match(imagePrompt(1240), image("bbbb")); got != 0 {
		t.Fatalf("another image of the same size matched %d blocks", got)
	}
	if got := match(imagePrompt(1240), nil); got != 0 {
		t.Fatalf("the placeholder tokens without their image matched %d blocks", got)
	}
	next := imagePrompt(1400)
	if got, want := match(next, image("aaaa")), 1240/16; got != want {
		t.Fatalf("the same image next turn matched %d blocks, want %d", got, want)
	}
	if got := takeMM(t, p, next, image("aaaa")); got != a {
		t.Fatalf("the next turn went to engine %d, its image's blocks are on %d", got, a)
	}
}

// TestKVEventsReadImageKeys applies BlockStored events whose extra_keys
// carry (mm_hash, offset) pairs as vLLM writes them, through the msgpack
// codec: the blocks are keyed with the image and match only it.
func TestKVEventsReadImageKeys(t *testing.T) {
	r, _ := NewRouter(RouterConfig{Policy: RoutingPrefix, Index: kvindex.New(kvindex.Config{})})
	g := imagePrompt(1240)
	items := image("aaaa")
	n := len(g.TokenIDs) / 16
	hashes := make([]kvevents.Hash, n)
	extra := make([][]any, n)
	for i := range n {
		hashes[i] = kvevents.IntHash(uint64(1000 + i))
		for _, k := range kvindex.MMKeys(nil, items, 16*i, 16*i+16) {
			extra[i] = append(extra[i], []any{k.Hash, k.Offset})
		}
	}
	gpu := kvevents.MediumGPU
	ev := kvevents.Event{Tag: kvevents.TagBlockStored, BlockHashes: hashes, TokenIDs: g.TokenIDs[:16*n], BlockSize: 16,
		Medium: &gpu, ExtraKeys: extra}
	b, err := kvevents.Encode(kvevents.Batch{TS: 1, Events: []kvevents.Event{ev}})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := kvevents.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	r.applyKVEvents("http://e", batch, quietLog())
	match := func(mm []kvindex.MMItem) int {
		rt := r.begin(g, mm)
		defer r.end(&rt)
		return r.index.Match("http://e", rt.keys)
	}
	if got := match(items); got != n {
		t.Fatalf("the image's prompt matched %d of %d stored blocks", got, n)
	}
	if got := match(image("bbbb")); got != 0 {
		t.Fatalf("another image matched %d blocks", got)
	}
	if got := match(nil); got != 0 {
		t.Fatalf("the text prompt matched %d blocks", got)
	}

	// A malformed pair leaves the blocks unindexed rather than text-keyed.
	bad := ev
	bad.BlockHashes = []kvevents.Hash{kvevents.IntHash(1)}
	bad.TokenIDs = g.TokenIDs[:16]
	bad.ExtraKeys = [][]any{{[]any{"aaaa"}}}
	before := r.unmapped.Load()
	r.applyKVEvents("http://f", kvevents.Batch{Events: []kvevents.Event{bad}}, quietLog())
	if r.unmapped.Load() != before+1 {
		t.Fatal("a malformed multimodal key was indexed")
	}
}

func TestMMKeysFromExtraKeys(t *testing.T) {
	for _, c := range []struct {
		name   string
		extra  [][]any
		blocks int
		want   [][]kvindex.MMKey
		ok     bool
	}{
		{"none", nil, 2, nil, true},
		{"lora and salt only", [][]any{{"lora", "salt"}, {"lora"}}, 2, nil, true},
		{"lora, image, salt", [][]any{{"lora", []any{"h", int8(3)}, "salt"}, {"lora", []any{"h", int8(-13)}}}, 2,
			[][]kvindex.MMKey{{{Hash: "h", Offset: 3}}, {{Hash: "h", Offset: -13}}}, true},
		{"a nil block", [][]any{nil, {[]any{"h", uint16(300)}}}, 2, [][]kvindex.MMKey{nil, {{Hash: "h", Offset: 300}}}, true},
		{"two images in a block", [][]any{{[]any{"a", int64(1)}, []any{"b", uint8(9)}}}, 1,
			[][]kvindex.MMKey{{{Hash: "a", Offset: 1}, {Hash: "b", Offset: 9}}}, true},
		{"fewer entries than blocks", [][]any{{[]any{"h", int8(0)}}}, 2, nil, false},
		{"offset not an int", [][]any{{[]any{"h", 1.5}}}, 1, nil, false},
		{"hash not a string", [][]any{{[]any{int8(1), int8(1)}}}, 1, nil, false},
		{"three members", [][]any{{[]any{"h", int8(1), int8(2)}}}, 1, nil, false},
		{"offset out of range", [][]any{{[]any{"h", uint64(1) << 50}}}, 1, nil, false},
	} {
		got, ok := mmKeys(c.extra, c.blocks)
		if ok != c.ok || len(got) != len(c.want) {
			t.Errorf("%s: %v %v, want %v %v", c.name, got, ok, c.want, c.ok)
			continue
		}
		for i := range got {
			if len(got[i]) != len(c.want[i]) {
				t.Errorf("%s block %d: %v, want %v", c.name, i, got[i], c.want[i])
				continue
			}
			for j := range got[i] {
				if got[i][j] != c.want[i][j] {
					t.Errorf("%s block %d: %v, want %v", c.name, i, got[i], c.want[i])
				}
			}
		}
	}
}

// TestEngineSimImageEventsFeedTheIndex: an engine-sim keys an image
// prompt's blocks by the image and publishes the (mm_hash, offset) extra
// keys over ZMQ; the index keys them as the router keys the request, so
// the same image matches every block and another image of the same size
// none.
func TestEngineSimImageEventsFeedTheIndex(t *testing.T) {
	m := testmodel.Load(t, "qwen3")
	a := startEventSim(t, m, zmqEndpoint(t), zmqEndpoint(t))
	_, x := followEvents(t, []KVEventSource{{Engine: a.url, Endpoint: a.ep, ReplayEndpoint: a.replay}})

	grid := [3]int64{1, 8, 12} // 96 patches: 24 placeholder tokens
	img := features.Image{Hash: "img-a", Placeholder: features.Placeholder{Offset: 5, Length: 24},
		Processed: features.QwenImage{GridTHW: grid, PixelValues: make([]byte, 96*1176*2)}}
	f, err := features.QwenImageFeatures([]features.Image{img}, 1176, features.Options{Kwargs: true})
	if err != nil {
		t.Fatal(err)
	}
	tokens := prompt(16*6+3, 500).TokenIDs
	a.generateWith(t, tokens, `,"features":`+string(f.AppendJSON(nil)))
	k := x.Keyer()
	root := k.Root("", "")
	mine := []kvindex.MMItem{{Hash: "img-a", Offset: 5, Length: 24}}
	waitMatch(t, x, a.url, k.KeysMM(nil, root, tokens, mine), 6)
	other := []kvindex.MMItem{{Hash: "img-b", Offset: 5, Length: 24}}
	if got := x.Match(a.url, k.KeysMM(nil, root, tokens, other)); got != 0 {
		t.Errorf("another image matched %d blocks", got)
	}
	if got := x.Match(a.url, k.Keys(nil, root, tokens)); got != 0 {
		t.Errorf("the tokens without their image matched %d blocks", got)
	}
}
