package server

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestShutdownDrainsStreams serves vrender in front of a slow simulated
// engine, starts a stream, then shuts down: within the grace period the
// stream finishes intact; past it the stream is cut and the engine
// request aborted. /health answers 503 from the moment draining starts.
func TestShutdownDrainsStreams(t *testing.T) {
	tests := []struct {
		name     string
		grace    time.Duration
		complete bool
	}{
		{"stream finishes within grace", 20 * time.Second, true},
		{"stream cancelled after grace", 150 * time.Millisecond, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newOpenAIEnvWith(t, "", envOptions{noServer: true})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			served := make(chan error, 1)
			go func() {
				served <- Serve(ctx, ln, env.h, ServeOptions{Logger: discardLogger(), ShutdownTimeout: tc.grace})
			}()
			url := "http://" + ln.Addr().String()

			req, _ := http.NewRequest("POST", url+"/v1/chat/completions",
				strings.NewReader(`{"model":"qwen","stream":true,"messages":[{"role":"user","content":"think slowly"}]}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Request-Id", "drain")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			br := bufio.NewReader(res.Body)
			if _, err := br.ReadString('\n'); err != nil {
				t.Fatal(err)
			}
			if rec := do(env.h, "GET", "/health", "", nil); rec.Code != http.StatusOK {
				t.Fatalf("/health %d before shutdown", rec.Code)
			}
			stop() // SIGTERM
			deadline := time.Now().Add(2 * time.Second)
			for do(env.h, "GET", "/health", "", nil).Code != http.StatusServiceUnavailable {
				if time.Now().After(deadline) {
					t.Fatal("/health did not turn 503 while draining")
				}
				time.Sleep(5 * time.Millisecond)
			}
			// New connections are refused while the stream drains.
			if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
				t.Error("listener still accepts during drain")
			}
			rest, _ := io.ReadAll(br)
			done := strings.Contains(string(rest), "data: [DONE]")
			if done != tc.complete {
				t.Errorf("stream completed = %v, want %v (tail %q)", done, tc.complete, streamTail(string(rest)))
			}
			if tc.complete && !strings.Contains(string(rest), `"finish_reason":"stop"`) {
				t.Errorf("drained stream lacks its final chunk: %q", streamTail(string(rest)))
			}
			select {
			case err := <-served:
				if (err == nil) != tc.complete {
					t.Errorf("Serve returned %v", err)
				}
			case <-time.After(15 * time.Second):
				t.Fatal("Serve did not return")
			}
			if !tc.complete {
				wctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if err := env.sim.WaitAbort(wctx, "generate-tokens-chatcmpl-drain"); err != nil {
					t.Errorf("engine request not aborted: %v (aborts %q)", err, env.sim.Aborts())
				}
			}
			if got := env.h.InflightStreams(); got != 0 {
				t.Errorf("in-flight streams %d after shutdown", got)
			}
		})
	}
}

func streamTail(s string) string {
	if len(s) > 200 {
		return s[len(s)-200:]
	}
	return s
}
