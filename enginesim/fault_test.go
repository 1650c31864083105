package enginesim

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestFaults(t *testing.T) {
	tests := []struct {
		name   string
		fault  Fault
		stream bool
		check  func(t *testing.T, resp *http.Response, err error, body string, readErr error)
	}{
		{"refuse closes without a response", Fault{Kind: FaultRefuse}, true,
			func(t *testing.T, resp *http.Response, err error, _ string, _ error) {
				if err == nil {
					t.Fatalf("got a response %d, want a connection error", resp.StatusCode)
				}
			}},
		{"500 before the stream", Fault{Kind: FaultError}, true,
			func(t *testing.T, resp *http.Response, err error, body string, _ error) {
				if err != nil || resp.StatusCode != 500 || body != `{"error":{"message":"`+engineErrorMessage+`","type":"InternalServerError","param":null,"code":500}}` {
					t.Fatalf("%v %v %s", err, resp, body)
				}
			}},
		{"500 non-stream", Fault{Kind: FaultError, AfterTokens: 3}, false,
			func(t *testing.T, resp *http.Response, err error, body string, _ error) {
				if err != nil || resp.StatusCode != 500 || !strings.Contains(body, `"code":500`) {
					t.Fatalf("%v %v %s", err, resp, body)
				}
			}},
		{"500 in-stream after 2 events", Fault{Kind: FaultError, AfterTokens: 2}, true,
			func(t *testing.T, resp *http.Response, err error, body string, readErr error) {
				if err != nil || readErr != nil || resp.StatusCode != 200 {
					t.Fatalf("%v %v %v", err, readErr, resp)
				}
				evs := events(t, body)
				if len(evs) != 4 || !strings.HasPrefix(evs[2], `{"error":{"message":"`) || !strings.Contains(evs[2], `"code":500`) {
					t.Fatalf("events %q", evs)
				}
			}},
		{"drop after 2 events", Fault{Kind: FaultDrop, AfterTokens: 2}, true,
			func(t *testing.T, resp *http.Response, err error, body string, readErr error) {
				if err != nil || resp.StatusCode != 200 {
					t.Fatalf("%v %v", err, resp)
				}
				if readErr == nil || strings.Contains(body, "[DONE]") || strings.Count(body, "data: ") != 2 {
					t.Fatalf("read error %v, body %q: want 2 events then a broken stream", readErr, body)
				}
			}},
		{"drop non-stream", Fault{Kind: FaultDrop}, false,
			func(t *testing.T, resp *http.Response, err error, _ string, readErr error) {
				if err == nil && readErr == nil {
					t.Fatalf("got a whole response %d", resp.StatusCode)
				}
			}},
		{"stall after 1 event", Fault{Kind: FaultStall, AfterTokens: 1}, true,
			func(t *testing.T, resp *http.Response, err error, body string, readErr error) {
				if err != nil || !errors.Is(readErr, context.DeadlineExceeded) || strings.Count(body, "data: ") != 1 {
					t.Fatalf("err %v read error %v body %q: want 1 event then silence", err, readErr, body)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sim, srv := newServer(t, Config{Fault: tc.fault})
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			body := `{"request_id":"f","token_ids":[1,2],"sampling_params":{"max_tokens":8},"stream":` + map[bool]string{true: "true", false: "false"}[tc.stream] + `}`
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/inference/v1/generate", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			var out []byte
			var readErr error
			if err == nil {
				out, readErr = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			tc.check(t, resp, err, string(out), readErr)
			if tc.fault.Kind == FaultStall {
				wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer wcancel()
				if err := sim.WaitAbort(wctx, "generate-tokens-f"); err != nil {
					t.Fatalf("stalled request not recorded as aborted: %v", err)
				}
			}
		})
	}
}

func TestFaultRateAndValidation(t *testing.T) {
	if err := (Fault{Kind: "boom"}).Validate(); err == nil {
		t.Fatal("unknown kind accepted")
	}
	if err := (Fault{Kind: FaultDrop, Rate: 2}).Validate(); err == nil {
		t.Fatal("rate 2 accepted")
	}
	s := &Sim{}
	hits := 0
	for range 1000 {
		if s.faultStrikes(Fault{Kind: FaultDrop, Rate: 0.25}) {
			hits++
		}
	}
	if hits < 150 || hits > 350 {
		t.Fatalf("rate 0.25 struck %d of 1000", hits)
	}
}
