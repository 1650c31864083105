package enginesim

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSchedulerGauges: with serial prefills, one request prefills
// (running) while the others wait for their turn; /metrics shows them in
// vLLM's gauges, and both return to 0 when the requests end (finished or
// client gone).
func TestSchedulerGauges(t *testing.T) {
	_, srv := newServer(t, Config{SerialPrefill: true, FirstTokenLatency: 30 * time.Second})
	gauges := func() (string, string) {
		_, body := get(t, srv.URL+"/metrics")
		return sample(t, body, MetricRequestsRunning+"{"), sample(t, body, MetricRequestsWaiting+"{")
	}
	if r, w := gauges(); r != "0.0" || w != "0.0" {
		t.Fatalf("idle: running %s waiting %s, want 0.0 0.0", r, w)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/inference/v1/generate",
				strings.NewReader(`{"token_ids":[1,2,3],"sampling_params":{"max_tokens":2}}`))
			req.Header.Set("Content-Type", "application/json")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	await := func(what, running, waiting string) {
		t.Helper()
		for {
			r, w := gauges()
			if r == running && w == waiting {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: running %s waiting %s, want %s %s", what, r, w, running, waiting)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	await("3 requests, serial prefill", "1.0", "2.0")
	cancel()
	wg.Wait()
	await("after the clients left", "0.0", "0.0")
	// Requests that complete are counted out too.
	_, fast := newServer(t, Config{SerialPrefill: true, FirstTokenLatency: time.Millisecond, TokenLatency: time.Millisecond})
	for _, stream := range []string{"false", "true"} {
		if status, _, _ := post(t, fast.URL+"/inference/v1/generate", `{"token_ids":[1,2,3],"stream":`+stream+`,"sampling_params":{"max_tokens":2}}`); status != 200 {
			t.Fatalf("status %d", status)
		}
	}
	_, body := get(t, fast.URL+"/metrics")
	if r, w := sample(t, body, MetricRequestsRunning+"{"), sample(t, body, MetricRequestsWaiting+"{"); r != "0.0" || w != "0.0" {
		t.Errorf("after completed requests: running %s waiting %s, want 0.0 0.0", r, w)
	}
}
