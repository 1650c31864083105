package engine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/vrender/vrender/protocol"
)

// TestTraceparentSentToEngine: generate and abort carry the caller's W3C
// trace context, and nothing when the caller has none.
func TestTraceparentSentToEngine(t *testing.T) {
	var mu sync.Mutex
	got := map[string][]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.URL.Path] = append(got[r.URL.Path], r.Header.Get("traceparent"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == generatePath {
			_, _ = w.Write([]byte(`{"request_id":"r","choices":[{"index":0,"token_ids":[1],"finish_reason":"stop"}]}`))
		}
	}))
	defer srv.Close()
	c, err := New(srv.URL, Options{Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	traced := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	const want = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tests := []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"traced", traced, want},
		{"untraced", context.Background(), ""},
	}
	for _, tc := range tests {
		mu.Lock()
		clear(got)
		mu.Unlock()
		if _, err := c.Generate(tc.ctx, &protocol.GenerateRequest{TokenIDs: []int{1}}, "r"); err != nil {
			t.Fatalf("%s: generate: %v", tc.name, err)
		}
		if err := c.Abort(tc.ctx, "generate-tokens-r"); err != nil {
			t.Fatalf("%s: abort: %v", tc.name, err)
		}
		mu.Lock()
		for _, path := range []string{generatePath, abortPath} {
			if h := got[path]; len(h) != 1 || h[0] != tc.want {
				t.Errorf("%s: %s traceparent %q, want %q", tc.name, path, h, tc.want)
			}
		}
		mu.Unlock()
	}
}
