package engine

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vrender/vrender/protocol"
)

// testRequest is a minimal generate request as render produces it.
func testRequest() *protocol.GenerateRequest {
	maxTokens := 100
	sp := protocol.NewSamplingParams()
	sp.MaxTokens = &maxTokens
	return &protocol.GenerateRequest{
		RequestID:      "from-render",
		TokenIDs:       []int{1, 2, 3},
		SamplingParams: sp,
		OutputMode:     protocol.OutputModeTokens,
	}
}

// engineServer is an httptest engine whose generate handler the test
// supplies; it records requests and counts new connections.
type engineServer struct {
	*httptest.Server
	newConns atomic.Int64
	mu       sync.Mutex
	bodies   []map[string]json.RawMessage
	headers  []http.Header
	paths    []string
}

func newEngineServer(t *testing.T, generate http.HandlerFunc) *engineServer {
	t.Helper()
	es := &engineServer{}
	mux := http.NewServeMux()
	record := func(r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m map[string]json.RawMessage
		_ = json.Unmarshal(body, &m)
		es.mu.Lock()
		es.bodies = append(es.bodies, m)
		es.headers = append(es.headers, r.Header.Clone())
		es.paths = append(es.paths, r.URL.Path)
		es.mu.Unlock()
	}
	mux.HandleFunc("POST "+generatePath, func(w http.ResponseWriter, r *http.Request) {
		record(r)
		generate(w, r)
	})
	mux.HandleFunc("POST "+abortPath, func(w http.ResponseWriter, r *http.Request) {
		record(r)
		w.WriteHeader(http.StatusOK)
	})
	es.Server = httptest.NewUnstartedServer(mux)
	es.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			es.newConns.Add(1)
		}
	}
	es.Start()
	t.Cleanup(es.Close)
	return es
}

func (es *engineServer) requests() int {
	es.mu.Lock()
	defer es.mu.Unlock()
	return len(es.bodies)
}

func (es *engineServer) body(i int) map[string]json.RawMessage {
	es.mu.Lock()
	defer es.mu.Unlock()
	return es.bodies[i]
}

func (es *engineServer) header(i int) http.Header {
	es.mu.Lock()
	defer es.mu.Unlock()
	return es.headers[i]
}

// writeSSE starts an event stream and writes events, flushing each.
func writeSSE(w http.ResponseWriter, events ...string) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.WriteHeader(http.StatusOK)
	}
	for _, e := range events {
		fmt.Fprintf(w, "data: %s\n\n", e)
		w.(http.Flusher).Flush()
	}
}

// sseEvents answers every generate with the given events.
func sseEvents(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { writeSSE(w, events...) }
}

// jsonError writes a vLLM error body.
func jsonError(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// tokenEvent is a one-token stream event of choice 0.
func tokenEvent(id int) string {
	return fmt.Sprintf(`{"request_id":"generate-tokens-req-1","usage":null,"output_mode":"tokens","choices":[{"index":0,"finish_reason":null,"token_ids":[%d],"weight_versions":null,"logprobs":null}]}`, id)
}

func newTestClient(t *testing.T, url string, o Options) *Client {
	t.Helper()
	c, err := New(url, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// recvAll reads a stream to its end and returns the events and the final
// error.
func recvAll(t *testing.T, s *Stream) ([]*protocol.GenerateResponse, error) {
	t.Helper()
	var out []*protocol.GenerateResponse
	for {
		r, err := s.Recv()
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
}

// asError extracts an *Error or fails the test.
func asError(t *testing.T, err error) *Error {
	t.Helper()
	e, ok := err.(*Error)
	if !ok {
		t.Fatalf("err = %v (%T), want *Error", err, err)
	}
	return e
}

// within fails the test if f takes longer than d.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	start := time.Now()
	f()
	if el := time.Since(start); el > d {
		t.Errorf("%s took %v, want < %v", what, el, d)
	}
}

// newBenchServer starts an httptest server for a benchmark and returns
// its URL.
func newBenchServer(b *testing.B, h http.HandlerFunc) string {
	b.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+generatePath, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		h(w, r)
	})
	srv := httptest.NewServer(mux)
	b.Cleanup(srv.Close)
	return srv.URL
}
