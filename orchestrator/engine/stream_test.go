package engine

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestStreamDeliversEventsThenEOF(t *testing.T) {
	es := newEngineServer(t, sseEvents(tokenEvent(11), tokenEvent(12), eventFinish, eventUsage, "[DONE]"))
	c := newTestClient(t, es.URL, Options{APIKey: "sekrit"})
	req := testRequest()
	s, err := c.Stream(context.Background(), req, "req-1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := recvAll(t, s)
	if err != io.EOF {
		t.Fatalf("final err = %v, want io.EOF", err)
	}
	if len(got) != 4 || got[0].Choices[0].TokenIDs[0] != 11 || got[1].Choices[0].TokenIDs[0] != 12 ||
		*got[2].Choices[0].FinishReason != "stop" || *got[3].Usage.CompletionTokens != 21 {
		t.Fatalf("events = %d %+v", len(got), got)
	}
	if _, err := s.Recv(); err != io.EOF {
		t.Errorf("Recv after EOF = %v, want io.EOF again", err)
	}
	if s.Events() != 4 {
		t.Errorf("Events() = %d", s.Events())
	}

	// What the engine was sent.
	h := es.header(0)
	for k, want := range map[string]string{
		"X-Request-Id": "req-1", "Content-Type": "application/json", "Authorization": "Bearer sekrit", "Accept": "text/event-stream",
	} {
		if h.Get(k) != want {
			t.Errorf("header %s = %q, want %q", k, h.Get(k), want)
		}
	}
	b := es.body(0)
	for k, want := range map[string]string{
		"request_id":     `"req-1"`,
		"stream":         `true`,
		"stream_options": `{"include_usage":true,"continuous_usage_stats":false}`,
		"token_ids":      `[1,2,3]`,
		"output_mode":    `"tokens"`,
	} {
		if string(b[k]) != want {
			t.Errorf("body %s = %s, want %s", k, b[k], want)
		}
	}
	var sp map[string]json.RawMessage
	if err := json.Unmarshal(b["sampling_params"], &sp); err != nil || string(sp["max_tokens"]) != "100" {
		t.Errorf("sampling_params = %s", b["sampling_params"])
	}
	// The caller's request is untouched.
	if req.RequestID != "from-render" || req.Stream != nil || req.StreamOptions != nil {
		t.Errorf("request modified: %+v", req)
	}
}

func TestStreamInStreamErrorEvent(t *testing.T) {
	es := newEngineServer(t, sseEvents(tokenEvent(1),
		`{"error":{"message":"EngineCore died","type":"InternalServerError","param":null,"code":500}}`, "[DONE]"))
	c := newTestClient(t, es.URL, Options{})
	s, err := c.Stream(context.Background(), testRequest(), "req-1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := recvAll(t, s)
	if len(got) != 1 {
		t.Fatalf("got %d events before the error", len(got))
	}
	e := asError(t, err)
	if e.Status != http.StatusBadGateway || e.EngineStatus != 500 || e.Message != "EngineCore died" || e.Temporary {
		t.Errorf("error = %+v", e)
	}
	if _, again := s.Recv(); again != err {
		t.Errorf("error not sticky: %v", again)
	}
}

func TestStreamEndsWithoutDone(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		events  int
	}{
		{"clean end of body", sseEvents(tokenEvent(1), tokenEvent(2)), 2},
		{"cut mid-event", func(w http.ResponseWriter, _ *http.Request) {
			writeSSE(w, tokenEvent(1))
			io.WriteString(w, `data: {"request_id":"x","choi`)
			w.(http.Flusher).Flush()
		}, 1},
		{"connection dropped", func(w http.ResponseWriter, _ *http.Request) {
			writeSSE(w, tokenEvent(1))
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close() // no chunked terminator: the client sees an unexpected EOF
			}
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es := newEngineServer(t, tt.handler)
			c := newTestClient(t, es.URL, Options{})
			s, err := c.Stream(context.Background(), testRequest(), "req-1")
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got, err := recvAll(t, s)
			e := asError(t, err)
			if len(got) != tt.events || e.Status != http.StatusBadGateway || !strings.Contains(e.Message, "engine closed the stream before [DONE]") {
				t.Errorf("events %d, error %+v", len(got), e)
			}
		})
	}
}

func TestStreamDoneWithoutTrailingBlankLine(t *testing.T) {
	es := newEngineServer(t, func(w http.ResponseWriter, _ *http.Request) {
		writeSSE(w, tokenEvent(1))
		io.WriteString(w, "data: [DONE]\n")
	})
	c := newTestClient(t, es.URL, Options{})
	s, err := c.Stream(context.Background(), testRequest(), "req-1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := recvAll(t, s); err != io.EOF || len(got) != 1 {
		t.Fatalf("events %d, err %v", len(got), err)
	}
}

func TestStreamMalformedEvent(t *testing.T) {
	es := newEngineServer(t, sseEvents(`{"request_id":"x","choices":[{"token_ids":["a"]}]}`, "[DONE]"))
	c := newTestClient(t, es.URL, Options{})
	s, err := c.Stream(context.Background(), testRequest(), "req-1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Recv()
	if e := asError(t, err); e.Status != http.StatusBadGateway {
		t.Errorf("error = %+v", e)
	}
}

func TestStreamWrongContentType(t *testing.T) {
	es := newEngineServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, eventFinish)
	})
	c := newTestClient(t, es.URL, Options{})
	_, err := c.Stream(context.Background(), testRequest(), "req-1")
	if e := asError(t, err); e.Status != http.StatusBadGateway || !strings.Contains(e.Message, "text/event-stream") {
		t.Errorf("error = %+v", e)
	}
}

// stallingServer sends headers and the given events, then holds the
// stream open until the client goes away; it reports that on gone.
func stallingServer(t *testing.T, events ...string) (*engineServer, <-chan struct{}) {
	gone := make(chan struct{}, 8)
	es := newEngineServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeSSE(w, events...)
		if len(events) == 0 {
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
			gone <- struct{}{}
		case <-time.After(10 * time.Second):
		}
	})
	return es, gone
}

func TestStreamFirstEventTimeout(t *testing.T) {
	es, gone := stallingServer(t)
	c := newTestClient(t, es.URL, Options{FirstEventTimeout: 100 * time.Millisecond})
	s, err := c.Stream(context.Background(), testRequest(), "req-1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	within(t, 3*time.Second, "first-event timeout", func() {
		_, err = s.Recv()
	})
	e := asError(t, err)
	if e.Status != http.StatusGatewayTimeout || !strings.Contains(e.Message, "first-event timeout") {
		t.Errorf("error = %+v", e)
	}
	waitGone(t, gone)
}

func TestStreamHeadersNeverCome(t *testing.T) {
	gone := make(chan struct{}, 1)
	es := newEngineServer(t, func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		gone <- struct{}{}
	})
	c := newTestClient(t, es.URL, Options{FirstEventTimeout: 100 * time.Millisecond})
	var err error
	within(t, 3*time.Second, "stream without headers", func() {
		_, err = c.Stream(context.Background(), testRequest(), "req-1")
	})
	if e := asError(t, err); e.Status != http.StatusGatewayTimeout || e.Temporary {
		t.Errorf("error = %+v", e)
	}
	if es.requests() != 1 {
		t.Errorf("%d requests, a timeout must not be retried", es.requests())
	}
	waitGone(t, gone)
}

func TestStreamIdleTimeout(t *testing.T) {
	es, gone := stallingServer(t, tokenEvent(1), tokenEvent(2))
	c := newTestClient(t, es.URL, Options{IdleTimeout: 100 * time.Millisecond, FirstEventTimeout: 5 * time.Second})
	s, err := c.Stream(context.Background(), testRequest(), "req-1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Time the caller spends between Recv calls is not the engine's idle
	// time.
	for range 2 {
		if _, err := s.Recv(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(150 * time.Millisecond)
	}
	within(t, 3*time.Second, "idle timeout", func() { _, err = s.Recv() })
	e := asError(t, err)
	if e.Status != http.StatusGatewayTimeout || !strings.Contains(e.Message, "idle timeout") {
		t.Errorf("error = %+v", e)
	}
	waitGone(t, gone)
}

func TestStreamContextCancel(t *testing.T) {
	es, gone := stallingServer(t, tokenEvent(1))
	c := newTestClient(t, es.URL, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	s, err := c.Stream(ctx, testRequest(), "req-1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Recv(); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(50*time.Millisecond, cancel)
	within(t, 3*time.Second, "Recv after cancel", func() { _, err = s.Recv() })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	var e *Error
	if errors.As(err, &e) {
		t.Errorf("cancellation reported as engine error %+v", e)
	}
	waitGone(t, gone)
}

func TestStreamCloseInterruptsRecv(t *testing.T) {
	es, gone := stallingServer(t)
	c := newTestClient(t, es.URL, Options{})
	s, err := c.Stream(context.Background(), testRequest(), "req-1")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(50 * time.Millisecond)
		s.Close()
	}()
	within(t, 3*time.Second, "Recv after Close", func() { _, err = s.Recv() })
	wg.Wait()
	if !errors.Is(err, errStreamClosed) {
		t.Errorf("err = %v, want errStreamClosed", err)
	}
	s.Close() // idempotent
	waitGone(t, gone)
}

func TestStreamCancelBeforeHeaders(t *testing.T) {
	es := newEngineServer(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	c := newTestClient(t, es.URL, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var err error
	within(t, 3*time.Second, "Stream with expiring ctx", func() { _, err = c.Stream(ctx, testRequest(), "req-1") })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want context.DeadlineExceeded", err)
	}
}

func waitGone(t *testing.T, gone <-chan struct{}) {
	t.Helper()
	select {
	case <-gone:
	case <-time.After(3 * time.Second):
		t.Error("the engine did not see the client go away")
	}
}
