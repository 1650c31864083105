package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vrender/vrender/internal/testmodel"
)

// TestMultiTurnConversationGrows runs sessions against a fake chat server
// that answers "answer-<turn>" and reports 100 prompt tokens per message:
// each turn must carry the system prompt, every earlier message and
// answer, and the new message.
func TestMultiTurnConversationGrows(t *testing.T) {
	tok := testmodel.Tokenizer(t, "qwen3")
	var mu sync.Mutex
	seen := map[string][]chatMessage{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []chatMessage `json:"messages"`
		}
		data, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(data, &body); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		mu.Lock()
		seen[r.Header.Get("X-Request-Id")] = body.Messages
		mu.Unlock()
		turn := (len(body.Messages) - 1) / 2
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"answer-%d\"}}]}\n\n", turn)
		fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":1}}\n\n", 100*len(body.Messages))
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	mt, err := MultiTurnDataset(tok, MultiTurnOptions{Sessions: 3, Turns: 4, SystemLen: 16, FirstLen: 32, TurnLen: 8,
		OutputLen: 4, ThinkTime: time.Millisecond, RequestIDPrefix: "mt-"})
	if err != nil {
		t.Fatal(err)
	}
	var first []SampleRequest
	for _, s := range mt.Sessions {
		first = append(first, s[0])
	}
	res, err := RunServe(context.Background(), ServeOptions{BaseURL: srv.URL, Endpoint: "/v1/chat/completions", Model: "m",
		Requests: first, RequestRate: math.Inf(1), MultiTurn: mt})
	if err != nil {
		t.Fatal(err)
	}
	if res.Metrics.Completed != 12 || res.Metrics.Failed != 0 {
		t.Fatalf("completed %d failed %d, want 12 and 0", res.Metrics.Completed, res.Metrics.Failed)
	}
	for s, sess := range mt.Sessions {
		for turn, req := range sess {
			msgs := seen[req.RequestID]
			if len(msgs) != 2+2*turn || msgs[0].Role != "system" || msgs[0].Content != mt.System {
				t.Fatalf("session %d turn %d: %d messages %+v", s, turn, len(msgs), msgs)
			}
			for k := 0; k < turn; k++ {
				if msgs[1+2*k].Content != sess[k].Prompt || msgs[2+2*k].Content != fmt.Sprintf("answer-%d", k) {
					t.Errorf("session %d turn %d: history %d is %+v", s, turn, k, msgs[1+2*k:3+2*k])
				}
			}
			if msgs[len(msgs)-1].Content != req.Prompt {
				t.Errorf("session %d turn %d does not end with its new message", s, turn)
			}
		}
	}
	if got := res.Metrics.TotalInput; got != 3*(200+400+600+800) {
		t.Errorf("total input %d: prompt lengths come from the server's usage", got)
	}
}

func TestIdealCachedTokens(t *testing.T) {
	mt := &MultiTurn{Sessions: [][]SampleRequest{{{RequestID: "a0"}, {RequestID: "a1"}, {RequestID: "a2"}}, {{RequestID: "b0"}, {RequestID: "b1"}}}}
	reqs := []SampleRequest{{RequestID: "a0", PromptLen: 100}, {RequestID: "a1", PromptLen: 150}, {RequestID: "a2", PromptLen: 151},
		{RequestID: "b0", PromptLen: 40}} // b1 failed: the session ended
	// a1: min(100, 149) -> 96; a2: min(150, 150) -> 144; b: nothing.
	if got := IdealCachedTokens(mt, reqs, 16); got != 96+144 {
		t.Errorf("ideal %d, want 240", got)
	}
}

func TestPrefixReport(t *testing.T) {
	before := []EngineCounters{{URL: "a"}, {URL: "b", Requests: 5, CacheQueries: 100, CacheHits: 50}}
	after := []EngineCounters{{URL: "a", Requests: 30, CacheQueries: 1000, CacheHits: 600},
		{URL: "b", Requests: 15, CacheQueries: 1100, CacheHits: 650}}
	r := newPrefixReport(before, after, 1500)
	if r.PromptTokens != 2000 || r.CachedTokens != 1200 || r.PrefillTokens != 800 || r.HitRate != 0.6 ||
		r.IdealHitRate != 0.75 || math.Abs(r.OfIdeal-0.8) > 1e-12 || r.LoadMaxMean != 1.5 || r.PrefillMaxMean != 1 {
		t.Errorf("report %+v", r)
	}
	var b strings.Builder
	if err := WriteServeReport(&b, ServeOptions{RequestRate: math.Inf(1)}, &ServeResult{Prefix: r}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Prefill tokens computed:                 800") {
		t.Errorf("report:\n%s", b.String())
	}
}
