package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestPooledBodiesSentIntact: generate bodies written into reused buffers
// reach the engine byte for byte as MarshalJSON writes them, on every
// attempt, while many requests of different sizes (a picture's megabyte
// among them), retried after 503s, run at once and recycle each other's
// buffers.
func TestPooledBodiesSentIntact(t *testing.T) {
	var mu sync.Mutex
	got := map[string][][]byte{} // request id -> the bodies of its attempts
	es := newEngineServer(t, func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		mu.Lock()
		n := len(got[id]) // this attempt's number
		mu.Unlock()
		if n <= 2 && strings.HasSuffix(id, "-retried") {
			jsonError(w, 503, `{"error":{"message":"busy","type":"ServiceUnavailable","code":503}}`)
			return
		}
		writeSSE(w, tokenEvent(5), "[DONE]")
	})
	// The recorder keeps parsed bodies; keep the raw ones too.
	inner := es.Config.Handler
	es.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		id := r.Header.Get("X-Request-Id")
		got[id] = append(got[id], body)
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		inner.ServeHTTP(w, r)
	})
	c := newTestClient(t, es.URL, Options{Retries: 2})
	var wg sync.WaitGroup
	want := map[string][]byte{}
	for i := range 24 {
		req := testRequest()
		req.TokenIDs = make([]int, 1+i%5*(1<<14)) // up to 64k token ids
		for j := range req.TokenIDs {
			req.TokenIDs[j] = (i + j) % 1000
		}
		id := fmt.Sprintf("req-%d", i)
		if i%3 == 0 {
			id += "-retried"
		}
		b, err := withRequestID(req, id, true).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		want[id] = b
		wg.Go(func() {
			s, err := c.Stream(context.Background(), req, id)
			if err != nil {
				t.Error(id, err)
				return
			}
			defer s.Close()
			if _, err := recvAll(t, s); err != io.EOF {
				t.Error(id, err)
			}
		})
	}
	wg.Wait()
	for id, w := range want {
		attempts := got[id]
		if n := map[bool]int{true: 3, false: 1}[strings.HasSuffix(id, "-retried")]; len(attempts) != n {
			t.Errorf("%s: %d attempts, want %d", id, len(attempts), n)
		}
		for k, b := range attempts {
			if !bytes.Equal(b, w) {
				t.Errorf("%s attempt %d: the engine got %d bytes unlike the %d MarshalJSON writes", id, k, len(b), len(w))
			}
		}
	}
}
