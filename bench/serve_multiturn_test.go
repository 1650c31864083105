package bench

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/jpeg"
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

// fakeChatServer answers "answer-<turn>" and reports 100 prompt tokens
// per message; seen gives the messages of a request id.
func fakeChatServer(t *testing.T) (srv *httptest.Server, seen func(id string) []chatMessage) {
	var mu sync.Mutex
	byID := map[string][]chatMessage{}
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []chatMessage `json:"messages"`
		}
		data, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(data, &body); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		mu.Lock()
		byID[r.Header.Get("X-Request-Id")] = body.Messages
		mu.Unlock()
		turn := (len(body.Messages) - 1) / 2
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"answer-%d\"}}]}\n\n", turn)
		fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":1}}\n\n", 100*len(body.Messages))
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, func(id string) []chatMessage {
		mu.Lock()
		defer mu.Unlock()
		return byID[id]
	}
}

// runSessions runs mt's sessions against srv.
func runSessions(t *testing.T, srv *httptest.Server, mt *MultiTurn) *ServeResult {
	t.Helper()
	var first []SampleRequest
	for _, s := range mt.Sessions {
		first = append(first, s[0])
	}
	res, err := RunServe(context.Background(), ServeOptions{BaseURL: srv.URL, Endpoint: "/v1/chat/completions", Model: "m",
		Requests: first, RequestRate: math.Inf(1), MultiTurn: mt})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestMultiTurnConversationGrows runs sessions against a fake chat server:
// each turn must carry the system prompt, every earlier message and
// answer, and the new message.
func TestMultiTurnConversationGrows(t *testing.T) {
	tok := testmodel.Tokenizer(t, "qwen3")
	srv, seenID := fakeChatServer(t)
	mt, err := MultiTurnDataset(tok, MultiTurnOptions{Sessions: 3, Turns: 4, SystemLen: 16, FirstLen: 32, TurnLen: 8,
		OutputLen: 4, ThinkTime: time.Millisecond, RequestIDPrefix: "mt-"})
	if err != nil {
		t.Fatal(err)
	}
	res := runSessions(t, srv, mt)
	if res.Metrics.Completed != 12 || res.Metrics.Failed != 0 {
		t.Fatalf("completed %d failed %d, want 12 and 0", res.Metrics.Completed, res.Metrics.Failed)
	}
	for s, sess := range mt.Sessions {
		for turn, req := range sess {
			msgs := seenID(req.RequestID)
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

// TestMultiTurnImages: with an image size, every session's first user
// message starts with its picture, which each later turn sends again;
// sessions' pictures have one size and differ, unless shared.
func TestMultiTurnImages(t *testing.T) {
	tok := testmodel.Tokenizer(t, "qwen3")
	for _, shared := range []bool{false, true} {
		srv, seenID := fakeChatServer(t)
		mt, err := MultiTurnDataset(tok, MultiTurnOptions{Sessions: 3, Turns: 3, FirstLen: 16, TurnLen: 8, OutputLen: 4,
			ImageWidth: 64, ImageHeight: 48, ImageShared: shared, RequestIDPrefix: "img-"})
		if err != nil {
			t.Fatal(err)
		}
		if res := runSessions(t, srv, mt); res.Metrics.Completed != 9 {
			t.Fatalf("shared=%v: completed %d, want 9", shared, res.Metrics.Completed)
		}
		urls := map[string]bool{}
		for s, sess := range mt.Sessions {
			var url string
			for turn, req := range sess {
				msgs := seenID(req.RequestID)
				parts, ok := msgs[0].Content.([]any)
				if !ok || len(parts) != 2 {
					t.Fatalf("session %d turn %d: first message %+v, want an image and text", s, turn, msgs[0])
				}
				img, _ := parts[0].(map[string]any)["image_url"].(map[string]any)
				text, _ := parts[1].(map[string]any)["text"].(string)
				u, _ := img["url"].(string)
				if text != sess[0].Prompt || (turn > 0 && u != url) {
					t.Errorf("session %d turn %d: the first message changed", s, turn)
				}
				url = u
				if turn > 0 && msgs[len(msgs)-1].Content != req.Prompt {
					t.Errorf("session %d turn %d: later messages are text", s, turn)
				}
			}
			b64, ok := strings.CutPrefix(url, "data:image/jpeg;base64,")
			if !ok {
				t.Fatalf("session %d: url %.40q is not a JPEG data URL", s, url)
			}
			data, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
			if err != nil || cfg.Width != 64 || cfg.Height != 48 {
				t.Errorf("session %d: picture %dx%d (%v), want 64x48", s, cfg.Width, cfg.Height, err)
			}
			urls[url] = true
		}
		if want := map[bool]int{false: 3, true: 1}[shared]; len(urls) != want {
			t.Errorf("shared=%v: %d different pictures over 3 sessions, want %d", shared, len(urls), want)
		}
	}
	if _, err := MultiTurnDataset(tok, MultiTurnOptions{Sessions: 1, Turns: 1, FirstLen: 4, OutputLen: 1, ImageWidth: 10}); err == nil {
		t.Error("an image width without a height was accepted")
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
