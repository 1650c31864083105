package enginesim

import (
	"net/http"
	"strings"
	"testing"

	"github.com/vrender/vrender/features"
)

// TestItemCache follows vLLM's receiver cache through a conversation: a
// null item resolves from an earlier request's item under its hash (the
// answer still names the picture's size and hash), and fails its request
// as the engine core does (finish_reason "error", or the stream's error
// event) when the cache never held it, evicted it, or lost it with the
// engine's restart; two pictures of one size are never confused.
func TestItemCache(t *testing.T) {
	kw := features.Options{Kwargs: true}
	grid := [][3]int64{{1, 4, 6}}
	// a and b: one size, different pixels and hashes.
	a := qwenFeatures(t, []string{"img-a"}, grid, []int{3}, kw)
	b := qwenFeatures(t, []string{"img-b"}, grid, []int{3}, kw)
	nullA := qwenFeatures(t, []string{"img-a"}, grid, []int{3}, features.Options{})
	nullB := qwenFeatures(t, []string{"img-b"}, grid, []int{3}, features.Options{})
	// Room for one picture's item (24 rows of 1176 bf16 values, plus its
	// msgpack framing), not two.
	one := int64(24*1176*2 + 200)
	seenA, seenB := "I see 1 image: 84x56 (grid 1x4x6), mm_hash img-a.", "I see 1 image: 84x56 (grid 1x4x6), mm_hash img-b."

	sim, srv := newServer(t, Config{MMProcessorCacheBytes: one})
	url := srv.URL + "/inference/v1/generate"
	send := func(f string, stream bool) (int, string) {
		body := `{"token_ids":` + tokenList(30, 100) + `,"sampling_params":{"max_tokens":200},"features":` + f
		if stream {
			body += `,"stream":true`
		}
		status, _, out := post(t, url, body+`}`)
		return status, out
	}
	hit := func(name, f, seen string) {
		t.Helper()
		status, out := send(f, false)
		if status != http.StatusOK || !strings.Contains(answerText(t, sim, out), seen) {
			t.Errorf("%s: %d %s, want an answer seeing %q", name, status, out, seen)
		}
	}
	miss := func(name, f string) {
		t.Helper()
		status, out := send(f, false)
		if status != http.StatusOK || !strings.Contains(out, `"finish_reason":"error","stop_reason":null,"token_ids":[]`) {
			t.Errorf("%s: %d %s, want the choice finished with error and no tokens", name, status, out)
		}
		status, out = send(f, true)
		want := `data: {"error":{"message":"Internal server error","type":"InternalServerError","param":null,"code":500}}` +
			"\n\ndata: [DONE]\n\n"
		if status != http.StatusOK || out != want {
			t.Errorf("%s, streamed: %d %q, want %q", name, status, out, want)
		}
	}

	miss("never sent", nullA)
	hit("a with its data", a, seenA)
	hit("a from the cache", nullA, seenA)
	miss("b, same size, never sent", nullB)
	hit("b with its data (evicts a)", b, seenB)
	hit("b from the cache", nullB, seenB)
	miss("a, evicted", nullA)
	if n := sim.itemMisses.Load(); n != 6 {
		t.Errorf("itemMisses = %d, want 6 (3 misses, each sent twice)", n)
	}
	// The same picture twice in one prompt, the second null: it resolves
	// from the first (the receiver fills items in prompt order).
	twice := qwenFeatures(t, []string{"img-a", "img-a"}, [][3]int64{{1, 4, 6}, {1, 4, 6}}, []int{3, 12}, kw)
	k := strings.Index(twice, `"kwargs_data":{"image":["`)
	i := k + strings.Index(twice[k:], `","`) // the end of the first kwargs item
	j := strings.Index(twice[i:], `"]`)
	twice = twice[:i+1] + ",null" + twice[i+j+1:]
	hit("a twice, the second null", twice, "I see 2 images: 84x56 (grid 1x4x6), mm_hash img-a; 84x56 (grid 1x4x6), mm_hash img-a.")

	// A restarted engine has lost its cache.
	_, srv2 := newServer(t, Config{MMProcessorCacheBytes: one})
	url = srv2.URL + "/inference/v1/generate"
	miss("after a restart", nullA)

	// No cache at all: every null item fails its request.
	_, srv3 := newServer(t, Config{MMProcessorCacheBytes: -1})
	url = srv3.URL + "/inference/v1/generate"
	hit("no cache, with data", a, seenA)
	miss("no cache, null", nullA)
}

// TestItemCacheMissKeepsKV: a decode leg whose null item the engine lacks
// fails before any KV transfer starts, so the same request resent with the
// item's data still finds the prefill engine's blocks (each is handed over
// once).
func TestItemCacheMissKeepsKV(t *testing.T) {
	f := qwenFeatures(t, []string{"img-a"}, [][3]int64{{1, 4, 6}}, []int{3}, features.Options{Kwargs: true})
	null := qwenFeatures(t, []string{"img-a"}, [][3]int64{{1, 4, 6}}, []int{3}, features.Options{})
	decodeSim, decode := prefilled(t, NewKVRegistry(), f)
	var status int
	var out string
	if status, out = decode(null); status != http.StatusOK || !strings.Contains(out, `"finish_reason":"error"`) {
		t.Fatalf("decode with a null item the engine lacks: %d %s", status, out)
	}
	if status, out = decode(f); status != http.StatusOK || !strings.Contains(answerText(t, decodeSim, out), "mm_hash img-a") {
		t.Fatalf("the same decode with the data: %d %s", status, out)
	}
}
