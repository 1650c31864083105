package enginesim

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/kvevents"
	"github.com/vrender/vrender/kvindex"
	"github.com/vrender/vrender/protocol"
)

// qwenFeatures is a request's features JSON for images (grids t×h×w, in
// prompt order) whose placeholders start at the given offsets, with
// kwargs_data as a Qwen2.5-VL render writes it (patch 14: rows of 1176).
func qwenFeatures(t testing.TB, hashes []string, grids [][3]int64, offsets []int, opts features.Options) string {
	t.Helper()
	imgs := make([]features.Image, len(hashes))
	for i, h := range hashes {
		g := grids[i]
		rows := g[0] * g[1] * g[2]
		px := make([]byte, rows*1176*2)
		for j := range px {
			px[j] = byte(j*7 + i)
		}
		imgs[i] = features.Image{Hash: h, Placeholder: features.Placeholder{Offset: offsets[i], Length: int(rows / 4)},
			Processed: features.QwenImage{GridTHW: g, PixelValues: px}}
	}
	f, err := features.QwenImageFeatures(imgs, 1176, opts)
	if err != nil {
		t.Fatal(err)
	}
	return string(f.AppendJSON(nil))
}

func answerText(t *testing.T, sim *Sim, body string) string {
	t.Helper()
	var r protocol.GenerateResponse
	if err := json.Unmarshal([]byte(body), &r); err != nil || len(r.Choices) == 0 {
		t.Fatalf("%v: %s", err, body)
	}
	return sim.tok.Decode(r.Choices[0].TokenIDs, false)
}

// TestFeaturesSeenInAnswer: a request with images is accepted and its
// answer says what arrived: sizes from the grids, the hashes' heads.
func TestFeaturesSeenInAnswer(t *testing.T) {
	sim, srv := newServer(t, Config{})
	url := srv.URL + "/inference/v1/generate"
	hash := "4f0c1d2e3f4a5b6c7d8e9f00112233445566778899aabbccddeeff0011223344"
	f := qwenFeatures(t, []string{hash, "short"}, [][3]int64{{1, 4, 6}, {1, 2, 2}}, []int{3, 20}, features.Options{Kwargs: true})
	body := `{"token_ids":` + tokenList(30, 100) + `,"sampling_params":{"max_tokens":200},"features":` + f + `}`
	status, _, resp := post(t, url, body)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, resp)
	}
	want := "I see 2 images: 84x56 (grid 1x4x6), mm_hash 4f0c1d2e3f4a…; 28x28 (grid 1x2x2), mm_hash short. "
	if got := answerText(t, sim, resp); !strings.Contains(got, want) {
		t.Errorf("answer %q lacks %q", got, want)
	}
	_, _, plain := post(t, url, `{"token_ids":`+tokenList(30, 100)+`,"sampling_params":{"max_tokens":200}}`)
	if got := answerText(t, sim, plain); strings.Contains(got, "I see") {
		t.Errorf("a text request's answer mentions images: %q", got)
	}
}

func TestFeaturesRefused(t *testing.T) {
	_, srv := newServer(t, Config{})
	url := srv.URL + "/inference/v1/generate"
	good := qwenFeatures(t, []string{"a"}, [][3]int64{{1, 4, 6}}, []int{3}, features.Options{Kwargs: true})
	noKwargs := qwenFeatures(t, []string{"a"}, [][3]int64{{1, 4, 6}}, []int{3}, features.Options{})
	cases := []struct {
		name, features, extra, msg string
	}{
		{"placeholder past the prompt", strings.Replace(good, `"offset":3`, `"offset":28`, 1), "",
			"mm_placeholders must remain within the token_ids sequence"},
		{"kwargs not base64", strings.Replace(good, `"kwargs_data":{"image":["`, `"kwargs_data":{"image":["%`, 1), "",
			"features.kwargs_data.image.0: not base64"},
		{"kwargs not an item", `{"mm_hashes":{"image":["a"]},"mm_placeholders":{"image":[{"offset":3,"length":6}]},` +
			`"kwargs_data":{"image":["kA=="]}}`, "", "image item 0: kwargs item: not a map"},
		{"placeholder longer than the grid", strings.Replace(good, `"length":6`, `"length":7`, 1), "",
			"Attempted to assign 6 multimodal tokens to 7 placeholders"},
		{"modalities differ", `{"mm_hashes":{"image":["a"]},"mm_placeholders":{"video":[{"offset":3,"length":6}]}}`, "",
			"mm_hashes and mm_placeholders must use the same modalities"},
		{"overlapping placeholders", `{"mm_hashes":{"image":["a","b"]},"mm_placeholders":{"image":[{"offset":3,"length":6},` +
			`{"offset":5,"length":6}]},"kwargs_data":null}`, "", "mm_placeholders must be globally non-overlapping and sorted"},
		{"offset not an int", `{"mm_hashes":{"image":["a"]},"mm_placeholders":{"image":[{"offset":"3","length":6}]}}`, "",
			"features.mm_placeholders.image.0.offset: Input should be a valid integer"},
	}
	for _, c := range cases {
		body := `{"token_ids":` + tokenList(30, 100) + `,"sampling_params":{"max_tokens":2},"features":` + c.features + c.extra + `}`
		status, _, resp := post(t, url, body)
		var e protocol.ErrorResponse
		_ = json.Unmarshal([]byte(resp), &e)
		if status != http.StatusBadRequest || e.Error.Type != "BadRequestError" || !strings.Contains(e.Error.Message, c.msg) {
			t.Errorf("%s: %d %s, want 400 BadRequestError %q", c.name, status, resp, c.msg)
		}
	}
	// A null item is the engine's to resolve when the request brings
	// its encoder output (ec_transfer_params) or its KV (requires_kv).
	body := `{"token_ids":` + tokenList(30, 100) + `,"sampling_params":{"max_tokens":2},"features":` +
		noKwargs + `,"ec_transfer_params":{"do_remote_encode":true}}`
	if status, _, resp := post(t, url, body); status != http.StatusOK {
		t.Errorf("kwargs null with ec_transfer_params: %d %s", status, resp)
	}
}

// TestImagesKeyBlocks: two images of one size (the same placeholder
// tokens) never share cached blocks, the same image next turn hits, and
// the BlockStored events carry (mm_hash, offset) extra keys per block as
// vLLM writes them.
func TestImagesKeyBlocks(t *testing.T) {
	pub := &recordPublisher{}
	_, srv := newServer(t, Config{PrefixCacheBlocks: 64, BlockSize: 4, EnablePromptTokensDetails: true, KVEvents: pub})
	url := srv.URL + "/inference/v1/generate"
	fa := qwenFeatures(t, []string{"img-a"}, [][3]int64{{1, 4, 6}}, []int{3}, features.Options{Kwargs: true})
	fb := qwenFeatures(t, []string{"img-b"}, [][3]int64{{1, 4, 6}}, []int{3}, features.Options{Kwargs: true})
	req := func(n int, f string) int {
		body := `{"token_ids":` + tokenList(n, 100) + `,"sampling_params":{"max_tokens":2}`
		if f != "" {
			body += `,"features":` + f
		}
		status, _, resp := post(t, url, body+`}`)
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, resp)
		}
		return cachedTokens(t, resp).(int)
	}
	if got := req(17, fa); got != 0 {
		t.Fatalf("cold: cached %d", got)
	}
	events := pub.events()
	want := [][]any{{[]any{"img-a", 3}}, {[]any{"img-a", -1}}, {[]any{"img-a", -5}}, nil}
	if len(events) != 1 || !reflect.DeepEqual(events[0].ExtraKeys, want) {
		t.Fatalf("events %+v, want extra_keys %v", events, want)
	}
	if got := req(17, fb); got != 0 {
		t.Errorf("another image of the same size: cached %d, want 0 (the image starts in block 0)", got)
	}
	if got := req(17, ""); got != 0 {
		t.Errorf("the placeholder tokens without an image: cached %d, want 0", got)
	}
	if got := req(30, fa); got != 16 {
		t.Errorf("the same image next turn: cached %d, want 16", got)
	}
}

// TestImageEventsDecodeAsVLLMWrites: the published extra_keys survive the
// wire as vLLM's tuples do (a msgpack array of the hash and an int).
func TestImageEventsDecodeAsVLLMWrites(t *testing.T) {
	st := &storedEvent{hashes: []uint64{1, 2}, tokens: make([]int, 8), blockSize: 4, lora: "ad", loraID: 1, salt: "s"}
	st.mm = [][]kvindex.MMKey{{{Hash: "h", Offset: 2}}, {{Hash: "h", Offset: -2}}}
	b, err := kvevents.Encode(kvevents.Batch{Events: []kvevents.Event{{Tag: kvevents.TagBlockStored,
		BlockHashes: intHashes(st.hashes), TokenIDs: st.tokens, BlockSize: 4, ExtraKeys: st.extraKeys()}}})
	if err != nil {
		t.Fatal(err)
	}
	// msgspec's bytes for [["ad", ["h", 2], "s"], ["ad", ["h", -2]]].
	wantTail := "\xaaextra_keys\x92\x93\xa2ad\x92\xa1h\x02\xa1s\x92\xa2ad\x92\xa1h\xfe"
	if !strings.HasSuffix(string(b), wantTail) {
		t.Fatalf("encoded % x\nwant suffix % x", b, wantTail)
	}
}

// TestFeaturesOnBothLegs follows vLLM's disaggregated serving: the proxy
// sends the decode instance the whole request, features included, and the
// decode engine needs the items (M-RoPE positions come from
// image_grid_thw; the last prompt token is recomputed there), so a decode
// leg's features are checked as any request's: kwargs present, or null
// with ec_transfer_params or requires_kv.
func TestFeaturesOnBothLegs(t *testing.T) {
	f := qwenFeatures(t, []string{"img-a"}, [][3]int64{{1, 4, 6}}, []int{3}, features.Options{Kwargs: true})
	noKwargs := qwenFeatures(t, []string{"img-a"}, [][3]int64{{1, 4, 6}}, []int{3}, features.Options{})
	decodeSim, decode := prefilled(t, nil, f)
	var status int
	var out string
	// The decode engine never saw the image: a null item cannot resolve,
	// and the engine core fails the request (finish_reason "error").
	if status, out = decode(noKwargs); status != http.StatusOK || !strings.Contains(out, `"finish_reason":"error"`) {
		t.Fatalf("decode without kwargs: %d %s, want a choice finished with error", status, out)
	}
	seen := "I see 1 image: 84x56 (grid 1x4x6), mm_hash img-a."
	status, out = decode(f)
	if status != http.StatusOK || !strings.Contains(answerText(t, decodeSim, out), seen) {
		t.Fatalf("decode with features: %d %s", status, out)
	}
	// Now it has (vLLM's receiver cache): the next turn may leave it out.
	if status, out = decode(noKwargs); status != http.StatusOK || !strings.Contains(answerText(t, decodeSim, out), seen) {
		t.Fatalf("decode with a cached item: %d %s", status, out)
	}
	other := qwenFeatures(t, []string{"img-b"}, [][3]int64{{1, 4, 6}}, []int{3}, features.Options{})
	handoff := strings.Replace(other, `"kwargs_data":null`,
		`"kwargs_data":null,"requires_kv":true,"kv_handoff":{"version":1,"model_fingerprint":"m","position_state":"sequence"}`, 1)
	if status, out = decode(handoff); status != http.StatusOK || !strings.Contains(answerText(t, decodeSim, out), "size unknown, mm_hash img-b") {
		t.Fatalf("decode with requires_kv: %d %s", status, out)
	}
}

// prefilled runs a prefill of 17 tokens with features f on a producer sim
// and returns the consumer sim and a decode of the same request on it,
// with the features given and the prefill's kv_transfer_params (reg: the
// sims' KV registry, nil for none).
func prefilled(t *testing.T, reg *KVRegistry, f string) (*Sim, func(features string) (int, string)) {
	t.Helper()
	_, prefillSrv := newServer(t, Config{KVRole: KVRoleProducer, KVRegistry: reg})
	decodeSim, decodeSrv := newServer(t, Config{KVRole: KVRoleConsumer, KVRegistry: reg})
	tokens := `"token_ids":` + tokenList(17, 100)
	status, _, out := post(t, prefillSrv.URL+"/inference/v1/generate", `{`+tokens+`,"sampling_params":{"max_tokens":1},`+
		`"features":`+f+`,"kv_transfer_params":{"do_remote_decode":true}}`)
	var resp struct {
		KV json.RawMessage `json:"kv_transfer_params"`
	}
	if err := json.Unmarshal([]byte(out), &resp); status != http.StatusOK || err != nil || len(resp.KV) < 10 {
		t.Fatalf("prefill: %d %s (%v)", status, out, err)
	}
	return decodeSim, func(features string) (int, string) {
		status, _, out := post(t, decodeSrv.URL+"/inference/v1/generate", `{`+tokens+`,"sampling_params":{"max_tokens":200},`+
			`"features":`+features+`,"kv_transfer_params":`+string(resp.KV)+`}`)
		return status, out
	}
}

// FuzzAcceptFeatures: whatever features a client sends, engine-sim answers
// with a check's verdict, never a panic.
func FuzzAcceptFeatures(f *testing.F) {
	f.Add([]byte(`{"mm_hashes":{"image":["a"]},"mm_placeholders":{"image":[{"offset":3,"length":6}]},"kwargs_data":null}`), 30)
	img := features.Image{Hash: "a", Placeholder: features.Placeholder{Offset: 3, Length: 6},
		Processed: features.QwenImage{GridTHW: [3]int64{1, 4, 6}, PixelValues: make([]byte, 24*1176*2)}}
	for _, opts := range []features.Options{{Kwargs: true}, {Kwargs: true, Metadata: true}} {
		ff, err := features.QwenImageFeatures([]features.Image{img}, 1176, opts)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(ff.AppendJSON(nil), 30)
	}
	f.Fuzz(func(t *testing.T, raw []byte, n int) {
		if n < 0 || n > 4096 || !json.Valid(raw) {
			return
		}
		node, err := wire.Parse(raw)
		if err != nil {
			return // nested deeper than a body may be
		}
		req := &protocol.GenerateRequest{TokenIDs: make([]int, n), Features: raw}
		// The engine holds an item "a" from an earlier request: null items
		// of that hash resolve, any other misses.
		held := func() *features.ItemLRU[seenImage] {
			c := features.NewItemLRU[seenImage](1 << 30)
			c.Add("a", 24*1176*2, seenImage{hash: "a", grid: [3]int64{1, 4, 6}, patch: 14})
			return c
		}
		in, e := (&Sim{items: held(), decoded: newDecodedItems(0)}).acceptFeatures(req, node)
		if e == nil {
			_ = describeImages(in.images)
		}
		// The decoded-item memo changes nothing: the same verdict when the
		// request's items are decoded, then when they are remembered.
		memo := &Sim{items: held(), decoded: newDecodedItems(1 << 20)}
		for pass := range 2 {
			got, ge := memo.acceptFeatures(req, node)
			if !reflect.DeepEqual(got, in) || !reflect.DeepEqual(ge, e) {
				t.Fatalf("pass %d with the memo: %+v %+v, without: %+v %+v", pass, got, ge, in, e)
			}
		}
	})
}

// TestDecodedItemsAsDecoding: engine-sim's check with the decoded-item
// memo gives every request of a conversation the verdict the check without
// it gives — accepted items, their grids and sizes, and each error — as
// pictures are re-sent, changed under the same hash, corrupted, or cut
// short, and while the memo evicts.
func TestDecodedItemsAsDecoding(t *testing.T) {
	kw := features.Options{Kwargs: true}
	a := qwenFeatures(t, []string{"img-a"}, [][3]int64{{1, 4, 6}}, []int{3}, kw)
	a2 := qwenFeatures(t, []string{"img-a", "img-b"}, [][3]int64{{1, 4, 6}, {1, 2, 2}}, []int{3, 40}, kw)
	b := qwenFeatures(t, []string{"img-b"}, [][3]int64{{1, 2, 2}}, []int{3}, features.Options{Kwargs: true, Metadata: true})
	// The same hash with another picture (its bytes differ; vLLM trusts
	// the hash, the check reads what was sent).
	other := qwenFeatures(t, []string{"img-a"}, [][3]int64{{1, 2, 2}}, []int{3}, kw)
	text := func(f string) string { // the kwargs item's base64
		i := strings.Index(f, `"kwargs_data":{"image":["`) + len(`"kwargs_data":{"image":["`)
		return f[i : i+strings.IndexByte(f[i:], '"')]
	}
	ta := text(a)
	cases := []struct {
		name, features string
		tokens         int
	}{
		{"first turn", a, 30},
		{"re-sent", a, 60},
		{"re-sent with a second picture", a2, 60},
		{"re-sent, placeholder too short for its grid", strings.Replace(a, `"length":6`, `"length":5`, 1), 60},
		{"re-sent past the prompt", a, 8},
		{"another picture under the same hash", other, 60},
		{"the first again", a, 60},
		{"with metadata", b, 30},
		{"corrupted base64", strings.Replace(a, ta, ta[:100]+"*"+ta[101:], 1), 60},
		{"corrupted msgpack, valid base64", strings.Replace(a, ta, "AAAA"+ta[4:], 1), 60},
		{"cut short", strings.Replace(a, ta, ta[:len(ta)-8], 1), 60},
		{"no kwargs, cached hash", qwenFeatures(t, []string{"img-a"}, [][3]int64{{1, 4, 6}}, []int{3}, features.Options{}), 60},
		{"the first once more", a, 60},
	}
	// The memos: none (every text decoded), roomy, and one with room for a
	// single picture's item, so the sequence evicts.
	plain := &Sim{items: features.NewItemLRU[seenImage](1 << 30), decoded: newDecodedItems(0)}
	memos := []*Sim{
		{items: features.NewItemLRU[seenImage](1 << 30), decoded: newDecodedItems(1 << 20)},
		{items: features.NewItemLRU[seenImage](1 << 30), decoded: newDecodedItems(len(ta))},
	}
	for _, c := range cases {
		node, err := wire.Parse([]byte(c.features))
		if err != nil {
			t.Fatal(err)
		}
		req := &protocol.GenerateRequest{TokenIDs: make([]int, c.tokens), Features: json.RawMessage(c.features)}
		want, wantErr := plain.acceptFeatures(req, node)
		for i, sim := range memos {
			got, err := sim.acceptFeatures(req, node)
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(err, wantErr) {
				t.Errorf("%s, memo %d: %+v %+v, without the memo: %+v %+v", c.name, i, got, err, want, wantErr)
			}
			if d := sim.decoded; d.bytes > d.limit {
				t.Errorf("%s, memo %d: holds %d bytes, over its %d", c.name, i, d.bytes, d.limit)
			}
		}
		for _, it := range want.brought {
			for _, sim := range append(memos, plain) {
				sim.items.Add(it.img.hash, it.size, it.img)
			}
		}
	}
	if n := memos[0].decoded.lru.Len(); n < 4 {
		t.Errorf("the roomy memo holds %d texts, want the 4 distinct items it decoded at least", n)
	}
}
