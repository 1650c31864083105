package enginesim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/kvevents"
	"github.com/vrender/vrender/protocol"
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

// TestLoRAAdapters: a generate request naming a --lora-modules adapter is
// answered under the adapter's name; its prompt blocks are keyed apart
// from the base model's (no hit on the base model's blocks, hits on its
// own) and published with vLLM's lora_name, lora_id and per-block extra
// keys; an unknown model is vLLM's 404; /v1/models lists the adapters
// after the base model.
func TestLoRAAdapters(t *testing.T) {
	pub := &recordPublisher{}
	_, srv := newServer(t, Config{PrefixCacheBlocks: 64, BlockSize: 4, EnablePromptTokensDetails: true, KVEvents: pub,
		LoRAModules: []protocol.LoRAModulePath{{Name: "sql-lora", Path: "/adapters/sql"},
			{Name: "chat-lora", Path: "/adapters/chat", BaseModelName: "qwen3"}}})
	url := srv.URL + "/inference/v1/generate"
	prompt := tokenList(10, 100)
	cases := []struct {
		name, extra string
		status      int
		cached      int
		model       string
	}{
		{"base, cold", "", 200, 0, "qwen3"},
		{"base, warm", "", 200, 8, "qwen3"},
		{"adapter misses the base model's blocks", `,"model":"sql-lora"`, 200, 0, "sql-lora"},
		{"adapter hits its own blocks", `,"model":"sql-lora"`, 200, 8, "sql-lora"},
		{"another adapter misses both", `,"model":"chat-lora"`, 200, 0, "chat-lora"},
		{"adapter with a salt", `,"model":"sql-lora","cache_salt":"s"`, 200, 0, "sql-lora"},
		{"served name is the base model", `,"model":"qwen3"`, 200, 8, "qwen3"},
	}
	for _, c := range cases {
		status, _, body := post(t, url, generateBody(prompt, c.extra))
		if status != c.status {
			t.Fatalf("%s: status %d: %s", c.name, status, body)
		}
		if got := cachedTokens(t, body); got != c.cached {
			t.Errorf("%s: cached_tokens %v, want %d", c.name, got, c.cached)
		}
		if want := `"model":"` + c.model + `"`; !strings.Contains(body, want) {
			t.Errorf("%s: answer lacks %s: %s", c.name, want, body)
		}
	}
	status, _, body := post(t, url, generateBody(prompt, `,"model":"nope-lora"`))
	if want := `{"error":{"message":"The model ` + "`nope-lora`" + ` does not exist.","type":"NotFoundError","param":"model","code":404}}`; status != 404 || body != want {
		t.Errorf("unknown adapter: %d %s, want 404 %s", status, body, want)
	}

	var stores []kvevents.Event
	for _, e := range pub.events() {
		if e.Tag == kvevents.TagBlockStored {
			stores = append(stores, e)
		}
	}
	if len(stores) != 4 {
		t.Fatalf("%d BlockStored events, want 4 (base, sql-lora, chat-lora, salted sql-lora)", len(stores))
	}
	str := func(s *string) string {
		if s == nil {
			return "<nil>"
		}
		return *s
	}
	id := func(p *int64) int64 {
		if p == nil {
			return -1
		}
		return *p
	}
	// vLLM writes extra_keys with one None per block when no block has any.
	if stores[0].LoRAName != nil || stores[0].LoRAID != nil || !reflect.DeepEqual(stores[0].ExtraKeys, [][]any{nil, nil}) {
		t.Errorf("base model's blocks carry adapter fields: %+v", stores[0])
	}
	for i, want := range []struct {
		name  string
		id    int64
		first []any
	}{{"sql-lora", 1, []any{"sql-lora"}}, {"chat-lora", 2, []any{"chat-lora"}}, {"sql-lora", 1, []any{"sql-lora", "s"}}} {
		e := stores[i+1]
		if str(e.LoRAName) != want.name || id(e.LoRAID) != want.id {
			t.Errorf("event %d: lora_name %s lora_id %d, want %s %d", i+1, str(e.LoRAName), id(e.LoRAID), want.name, want.id)
		}
		if len(e.ExtraKeys) != 2 || fmt.Sprint(e.ExtraKeys[0]) != fmt.Sprint(want.first) || fmt.Sprint(e.ExtraKeys[1]) != fmt.Sprint([]any{want.name}) {
			t.Errorf("event %d: extra_keys %v, want [%v [%s]]", i+1, e.ExtraKeys, want.first, want.name)
		}
		if e.BlockHashes[0].Key() == stores[0].BlockHashes[0].Key() {
			t.Errorf("event %d: the adapter's first block hash is the base model's", i+1)
		}
	}

	resp, err := http.Get(srv.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list protocol.ModelList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range list.Data {
		got = append(got, fmt.Sprintf("%s root=%s parent=%s", c.ID, str(c.Root), str(c.Parent)))
	}
	want := []string{"qwen3 root=" + str(list.Data[0].Root) + " parent=<nil>", "sql-lora root=/adapters/sql parent=qwen3",
		"chat-lora root=/adapters/chat parent=qwen3"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("/v1/models %v, want %v", got, want)
	}
}

func TestLoRAModulesValidated(t *testing.T) {
	m := testmodel.Load(t, "qwen3")
	for _, mods := range [][]protocol.LoRAModulePath{
		{{Name: "a", Path: "/a"}, {Name: "a", Path: "/b"}},
		{{Name: "qwen3", Path: "/a"}},
		{{Name: "a"}},
	} {
		if _, err := New(m, Config{ServedModelName: "qwen3", LoRAModules: mods}); err == nil {
			t.Errorf("New accepted --lora-modules %+v", mods)
		}
	}
}
