package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vrender/vrender/enginesim"
	"github.com/vrender/vrender/fleet"
)

// No client can take the service down or hurt another client (issue 19):
// client-chosen ids never reach an engine header as they are, engine
// failures never empty a pool, clients sharing an id never abort each
// other, and a stalled engine answers within the first-event timeout.

// ejectingPool ejects after three failures; health checks run too rarely
// to re-admit anything during a test.
var ejectingPool = fleet.HealthConfig{Interval: time.Hour, EjectAfter: 3}

func postWithID(t *testing.T, url, body, header string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if header != "" {
		req.Header.Set("X-Request-Id", header)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// TestClientRequestIDsNeverEjectEngines sends 100 requests whose body
// request_id holds control characters, newlines and DEL, interleaved with
// ordinary ones: every request is served (vLLM accepts any id string), the
// pool stays healthy, and the id reaches the engine only sanitised.
func TestClientRequestIDsNeverEjectEngines(t *testing.T) {
	env := newFaultEnvPool(t, enginesim.Config{}, ejectingPool)
	bad := []string{"a\nb", "\u0001", "x\u007fy", "\r\n\r\nInjected: 1", "tab\there", strings.Repeat("é", 300), `q"uo\te`}
	for i := range 100 {
		id := bad[i%len(bad)]
		idJSON, _ := json.Marshal(id)
		body := fmt.Sprintf(`{"model":"qwen","messages":[{"role":"user","content":"hi"}],"max_tokens":4,"request_id":%s}`, idJSON)
		status, got := postWithID(t, env.url+"/v1/chat/completions", body, "")
		if status != http.StatusOK {
			t.Fatalf("request %d (id %q): %d %s", i, id, status, got)
		}
		if status, got := postWithID(t, env.url+"/v1/chat/completions", faultChat, ""); status != http.StatusOK {
			t.Fatalf("ordinary request after %d: %d %s", i, status, got)
		}
	}
	for _, h := range env.pool.Health() {
		if !h.Healthy || h.ConsecutiveFailures != 0 || h.Ejections != 0 {
			t.Fatalf("engine health after hostile ids: %+v", h)
		}
	}
	for _, r := range env.sim.Requests() {
		for _, c := range r.RequestID {
			if c < 0x21 || c > 0x7e {
				t.Fatalf("engine saw request id %q", r.RequestID)
			}
		}
	}
}

// TestDroppingEngineNeverEmptiesPool: the pool's only engine drops 30% of
// its streams; whatever the run of drops, it stays in rotation, and every
// request that was not dropped is served.
func TestDroppingEngineNeverEmptiesPool(t *testing.T) {
	env := newFaultEnvPool(t, enginesim.Config{Fault: enginesim.Fault{Kind: enginesim.FaultDrop, AfterTokens: 1, Rate: 0.3}},
		fleet.HealthConfig{Interval: time.Hour, EjectAfter: 2})
	served, unavailable := 0, 0
	for range 60 {
		status, body := postWithID(t, env.url+"/v1/chat/completions", faultChat, "")
		switch {
		case status == http.StatusOK:
			served++
		case status == http.StatusServiceUnavailable:
			unavailable++
			t.Errorf("503 with the pool's only engine up: %s", body)
		}
		if h := env.pool.Health(); !h[0].Healthy {
			t.Fatalf("the pool ejected its only engine: %+v", h[0])
		}
	}
	t.Logf("served %d of 60, declined ejections (fail open) %d", served, env.pool.Health()[0].FailOpen)
	if served == 0 || unavailable != 0 {
		t.Fatalf("served %d, 503 %d", served, unavailable)
	}
}

// TestSharedRequestIDsDoNotAbortEachOther: two clients stream with the
// same X-Request-Id and body request_id; the first hangs up, the second's
// stream still finishes normally.
func TestSharedRequestIDsDoNotAbortEachOther(t *testing.T) {
	env := newFaultEnvPool(t, enginesim.Config{TokenLatency: 20 * time.Millisecond}, ejectingPool)
	body := `{"model":"qwen","messages":[{"role":"user","content":"hi"}],"max_tokens":30,"stream":true,"request_id":"same"}`
	var wg sync.WaitGroup
	var second string
	var secondStatus int
	wg.Go(func() {
		secondStatus, second = postWithID(t, env.url+"/v1/chat/completions", body, "same")
	})
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, env.url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "same")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 512)
	if _, err := res.Body.Read(buf); err != nil {
		t.Fatal(err)
	}
	cancel() // the first client hangs up mid-stream
	res.Body.Close()
	waitAborts(t, env.sim, 1)
	wg.Wait()
	ev := sseData(second)
	if secondStatus != http.StatusOK || len(ev) < 2 || ev[len(ev)-1] != "[DONE]" {
		t.Fatalf("second client: %d %q", secondStatus, ev)
	}
	if strings.Contains(second, `"finish_reason":"abort"`) || !strings.Contains(second, `"finish_reason":"length"`) {
		t.Fatalf("second client's stream did not finish on its own: %s", second)
	}
	// The sim records an abort call and the connection going away alike.
	if a := env.sim.Aborts(); len(slices.Compact(a)) != 1 {
		t.Fatalf("aborts %q, want only the first client's", a)
	}
}

// TestFirstEventStallAnswersWithinTimeout: an engine that accepts the
// request and never sends an event; streamed or not, the client gets a 504
// within the first-event timeout (plus slack), the engine request is
// aborted and the failure counts against the engine.
func TestFirstEventStallAnswersWithinTimeout(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			env := newFaultEnvPool(t, enginesim.Config{Fault: enginesim.Fault{Kind: enginesim.FaultStall, AfterTokens: 0}}, ejectingPool)
			body := faultChat
			if stream {
				body = faultChatStream
			}
			start := time.Now()
			status, got := postWithID(t, env.url+"/v1/chat/completions", body, "")
			took := time.Since(start)
			if status != http.StatusGatewayTimeout || !strings.Contains(got, "first-event timeout") {
				t.Fatalf("%d %s, want a 504 naming the first-event timeout", status, got)
			}
			if took < faultFirstEvent || took > faultFirstEvent+faultSlack {
				t.Errorf("answered after %v, want between %v and %v", took, faultFirstEvent, faultFirstEvent+faultSlack)
			}
			waitAborts(t, env.sim, 1)
			if h := env.pool.Health()[0]; h.ConsecutiveFailures != 1 {
				t.Errorf("stall not counted against the engine: %+v", h)
			}
		})
	}
}

// TestEngineErrorsDoNotNameEngineAddress: a client never learns where the
// engines are.
func TestEngineErrorsDoNotNameEngineAddress(t *testing.T) {
	env := newFaultEnvPool(t, enginesim.Config{}, ejectingPool)
	env.engine.Close()
	status, body := postWithID(t, env.url+"/v1/chat/completions", faultChat, "")
	host := strings.TrimPrefix(env.engine.URL, "http://")
	if status != http.StatusServiceUnavailable || strings.Contains(body, host) || strings.Contains(body, "127.0.0.1") {
		t.Fatalf("%d %s: must be a 503 that does not name %s", status, body, host)
	}
}
