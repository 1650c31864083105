package enginesim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/vrender/vrender/kvevents"
)

// recordPublisher keeps the batches a sim publishes.
type recordPublisher struct {
	mu      sync.Mutex
	batches []kvevents.Batch
}

func (p *recordPublisher) Publish(b kvevents.Batch) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.batches = append(p.batches, b)
	return nil
}

func (p *recordPublisher) events() []kvevents.Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []kvevents.Event
	for _, b := range p.batches {
		out = append(out, b.Events...)
	}
	return out
}

func tokenList(n, start int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprint(start + i)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func generateBody(tokens string, extra string) string {
	return `{"token_ids":` + tokens + `,"sampling_params":{"max_tokens":2}` + extra + `}`
}

func cachedTokens(t *testing.T, body string) any {
	t.Helper()
	var r struct {
		Usage struct {
			PromptTokensDetails *struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if r.Usage.PromptTokensDetails == nil {
		return nil
	}
	return r.Usage.PromptTokensDetails.CachedTokens
}

func TestPrefixCacheHitsAndEvents(t *testing.T) {
	pub := &recordPublisher{}
	sim, srv := newServer(t, Config{PrefixCacheBlocks: 8, BlockSize: 4, EnablePromptTokensDetails: true, KVEvents: pub})
	url := srv.URL + "/inference/v1/generate"
	cases := []struct {
		name   string
		tokens string
		extra  string
		cached int
	}{
		{"cold", tokenList(10, 100), "", 0},                        // stores 2 blocks
		{"same prompt", tokenList(10, 100), "", 8},                 // both blocks hit
		{"fully cached keeps one token", tokenList(8, 100), "", 4}, // at most len-1: 7 -> 1 block
		{"longer turn", tokenList(21, 100), "", 8},                 // stores blocks 3..5
		{"salted", tokenList(21, 100), `,"cache_salt":"s"`, 0},     // another key space
		{"diverged", tokenList(4, 100)[:len(tokenList(4, 100))-1] + ",7,7,7,7,7]", "", 4},
	}
	for _, c := range cases {
		status, _, body := post(t, url, generateBody(c.tokens, c.extra))
		if status != http.StatusOK {
			t.Fatalf("%s: status %d: %s", c.name, status, body)
		}
		if got := cachedTokens(t, body); got != c.cached {
			t.Errorf("%s: cached_tokens %v, want %d", c.name, got, c.cached)
		}
	}
	evs := pub.events()
	if len(evs) == 0 || evs[0].Tag != kvevents.TagBlockStored || len(evs[0].BlockHashes) != 2 ||
		evs[0].ParentBlockHash != nil || len(evs[0].TokenIDs) != 8 || evs[0].BlockSize != 4 {
		t.Fatalf("first event %+v, want BlockStored of 2 root blocks", evs)
	}
	var stored, removed int
	for _, e := range evs {
		switch e.Tag {
		case kvevents.TagBlockStored:
			stored += len(e.BlockHashes)
		case kvevents.TagBlockRemoved:
			removed += len(e.BlockHashes)
		}
	}
	// 2 + 3 (longer turn) + 5 (salted) + 1 (diverged) stored; capacity 8.
	if stored != 11 || removed != 3 {
		t.Errorf("stored %d removed %d blocks, want 11 and 3", stored, removed)
	}
	status, _, _ := post(t, srv.URL+"/reset_prefix_cache", "")
	if status != http.StatusOK {
		t.Fatalf("reset: %d", status)
	}
	if evs := pub.events(); evs[len(evs)-1].Tag != kvevents.TagAllBlocksCleared {
		t.Errorf("reset published %+v, want AllBlocksCleared", evs[len(evs)-1])
	}
	_, _, body := post(t, url, generateBody(tokenList(10, 100), ""))
	if got := cachedTokens(t, body); got != 0 {
		t.Errorf("after reset: cached_tokens %v, want 0", got)
	}
	q, h := sim.cache.stats()
	if q != 10+10+8+21+21+9+10 || h != 8+4+8+4 {
		t.Errorf("queries %d hits %d", q, h)
	}
}

func TestPromptTokensDetailsOffByDefault(t *testing.T) {
	_, srv := newServer(t, Config{PrefixCacheBlocks: 8})
	_, _, body := post(t, srv.URL+"/inference/v1/generate", generateBody(tokenList(40, 1), ""))
	if !strings.Contains(body, `"prompt_tokens_details":null`) {
		t.Errorf("without --enable-prompt-tokens-details the details are null: %s", body)
	}
}
