package engine

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestNewValidatesURL(t *testing.T) {
	for _, bad := range []string{"", "localhost:8200", "ftp://h:1", "http://", "http://h:1/?x=1", "://x"} {
		if _, err := New(bad, Options{}); err == nil {
			t.Errorf("New(%q) accepted", bad)
		}
	}
	c, err := New("http://10.0.0.7:8200/engine-a/", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.URL() != "http://10.0.0.7:8200/engine-a" || c.generateURL != "http://10.0.0.7:8200/engine-a/inference/v1/generate" {
		t.Errorf("URL %q generate %q", c.URL(), c.generateURL)
	}
}

func TestOptionDefaults(t *testing.T) {
	c := newTestClient(t, "http://127.0.0.1:1", Options{})
	if c.retries != defaultRetries || c.firstEventTimeout != defaultFirstEventTimeout || c.idleTimeout != defaultIdleTimeout {
		t.Errorf("defaults: %+v", c)
	}
	c = newTestClient(t, "http://127.0.0.1:1", Options{Retries: -1, IdleTimeout: -1, FirstEventTimeout: -1})
	if c.retries != 0 || c.firstEventTimeout != 0 || c.idleTimeout != 0 {
		t.Errorf("disabled: %+v", c)
	}
	if c.ownTransport.MaxIdleConnsPerHost < 500 || !c.ownTransport.DisableCompression {
		t.Errorf("transport: %+v", c.ownTransport)
	}
}

func TestEngineRequestID(t *testing.T) {
	if got := EngineRequestID("chatcmpl-abc"); got != "generate-tokens-chatcmpl-abc" {
		t.Errorf("EngineRequestID = %q", got)
	}
}

func TestStatusMapping(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      string
		want      int
		wantType  string
		msg       string
		temporary bool
	}{
		{"vllm 400", 400, `{"error":{"message":"stop strings are not supported","type":"BadRequestError","param":null,"code":400}}`,
			400, "BadRequestError", "stop strings are not supported", false},
		{"pydantic 400", 400, `{"error":{"message":"1 validation error:\n  token_ids: Field required","type":"Bad Request","param":"token_ids","code":400}}`,
			400, "Bad Request", "token_ids: Field required", false},
		{"fastapi 422 detail list", 422, `{"detail":[{"loc":["body","token_ids"],"msg":"Field required","type":"missing"}]}`,
			400, "BadRequestError", "Field required", false},
		{"404 unknown model", 404, `{"error":{"message":"The model 'x' does not exist.","type":"NotFoundError","param":"model","code":404}}`,
			404, "NotFoundError", "does not exist", false},
		{"404 detail string", 404, `{"detail":"Not Found"}`, 404, "NotFoundError", "Not Found", false},
		{"401 api key", 401, `{"error":"Unauthorized"}`, 502, "Bad Gateway", "Unauthorized", false},
		{"429", 429, `too many`, 503, "Service Unavailable", "too many", true},
		{"500", 500, `{"error":{"message":"EngineCore is dead","type":"InternalServerError","param":null,"code":500}}`,
			502, "Bad Gateway", "EngineCore is dead", false},
		{"502 from proxy, html", 502, `<html>bad gateway</html>`, 502, "Bad Gateway", "<html>bad gateway</html>", false},
		{"503", 503, `{"error":{"message":"overloaded","type":"ServiceUnavailable","code":503}}`,
			503, "Service Unavailable", "overloaded", true},
		{"504 from proxy", 504, ``, 504, "Gateway Timeout", "Gateway Timeout", false},
		{"empty 500", 500, ``, 502, "Bad Gateway", "Internal Server Error", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es := newEngineServer(t, func(w http.ResponseWriter, _ *http.Request) { jsonError(w, tt.status, tt.body) })
			c := newTestClient(t, es.URL, Options{Retries: -1})
			for _, call := range []string{"stream", "generate"} {
				var err error
				if call == "stream" {
					_, err = c.Stream(context.Background(), testRequest(), "req-1")
				} else {
					_, err = c.Generate(context.Background(), testRequest(), "req-1")
				}
				e := asError(t, err)
				if e.Status != tt.want || e.Type != tt.wantType || e.EngineStatus != tt.status ||
					!strings.Contains(e.Message, tt.msg) || e.Temporary != tt.temporary {
					t.Errorf("%s: error = %+v", call, e)
				}
			}
		})
	}
}

func TestLongErrorMessageTruncated(t *testing.T) {
	long := strings.Repeat("é", 3000)
	e := statusError(400, []byte(`{"error":{"message":"`+long+`"}}`))
	if len(e.Message) > maxErrorMessage+len("…") || !strings.HasSuffix(e.Message, "…") || !strings.HasPrefix(e.Message, "éé") {
		t.Errorf("message of %d bytes", len(e.Message))
	}
}

// countingDialer dials addr and counts attempts.
type countingDialer struct {
	attempts atomic.Int64
	addr     string
}

func (d *countingDialer) client() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		d.attempts.Add(1)
		var nd net.Dialer
		return nd.DialContext(ctx, network, d.addr)
	}}}
}

func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestRefusedConnectionRetried(t *testing.T) {
	addr := closedAddr(t)
	for _, tt := range []struct{ retries, attempts int }{{0, 3}, {-1, 1}, {4, 5}} {
		d := &countingDialer{addr: addr}
		c := newTestClient(t, "http://"+addr, Options{HTTPClient: d.client(), Retries: tt.retries})
		_, err := c.Stream(context.Background(), testRequest(), "req-1")
		e := asError(t, err)
		if e.Status != http.StatusServiceUnavailable || !e.Temporary || e.EngineStatus != 0 || !strings.Contains(e.Message, "refused") {
			t.Errorf("retries %d: error = %+v", tt.retries, e)
		}
		if got := d.attempts.Load(); got != int64(tt.attempts) {
			t.Errorf("retries %d: %d dial attempts, want %d", tt.retries, got, tt.attempts)
		}
	}
	// Non-streaming requests retry the same way, with the built-in transport.
	c := newTestClient(t, "http://"+addr, Options{Retries: 1})
	_, err := c.Generate(context.Background(), testRequest(), "req-1")
	if e := asError(t, err); e.Status != http.StatusServiceUnavailable {
		t.Errorf("generate: %+v", e)
	}
}

// resettingListener accepts connections, reads the request head and
// closes without answering; it counts the requests it dropped.
func resettingListener(t *testing.T) (addr string, accepted *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = new(atomic.Int64)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			_, _ = http.ReadRequest(bufio.NewReader(conn))
			conn.Close()
		}
	}()
	t.Cleanup(func() { l.Close(); wg.Wait() })
	return l.Addr().String(), accepted
}

func TestClosedBeforeAnyByteRetried(t *testing.T) {
	addr, accepted := resettingListener(t)
	c := newTestClient(t, "http://"+addr, Options{Retries: 2})
	_, err := c.Stream(context.Background(), testRequest(), "req-1")
	if e := asError(t, err); e.Status != http.StatusServiceUnavailable || !e.Temporary {
		t.Errorf("error = %+v", e)
	}
	if accepted.Load() != 3 {
		t.Errorf("%d attempts, want 3", accepted.Load())
	}
}

func TestEngine503RetriedThenSucceeds(t *testing.T) {
	var calls atomic.Int64
	es := newEngineServer(t, func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) <= 2 {
			jsonError(w, 503, `{"error":{"message":"warming up","type":"ServiceUnavailable","code":503}}`)
			return
		}
		writeSSE(w, tokenEvent(5), "[DONE]")
	})
	c := newTestClient(t, es.URL, Options{Retries: 2})
	s, err := c.Stream(context.Background(), testRequest(), "req-1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := recvAll(t, s)
	if err != io.EOF || len(got) != 1 || calls.Load() != 3 {
		t.Fatalf("events %d err %v calls %d", len(got), err, calls.Load())
	}
	// Every attempt carried the same request id.
	for i := range 3 {
		if es.header(i).Get("X-Request-Id") != "req-1" || string(es.body(i)["request_id"]) != `"req-1"` {
			t.Errorf("attempt %d: id %q %s", i, es.header(i).Get("X-Request-Id"), es.body(i)["request_id"])
		}
	}
}

func TestNoRetryAfterFirstEvent(t *testing.T) {
	es := newEngineServer(t, func(w http.ResponseWriter, _ *http.Request) {
		writeSSE(w, tokenEvent(1))
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	})
	c := newTestClient(t, es.URL, Options{Retries: 5})
	s, err := c.Stream(context.Background(), testRequest(), "req-1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := recvAll(t, s)
	if e := asError(t, err); e.Status != http.StatusBadGateway || e.Temporary || len(got) != 1 {
		t.Errorf("events %d error %+v", len(got), e)
	}
	if es.requests() != 1 {
		t.Errorf("%d requests: a stream that delivered an event was retried", es.requests())
	}
}

func TestNoRetryOnClientErrors(t *testing.T) {
	es := newEngineServer(t, func(w http.ResponseWriter, _ *http.Request) { jsonError(w, 500, `{}`) })
	c := newTestClient(t, es.URL, Options{Retries: 3})
	if _, err := c.Stream(context.Background(), testRequest(), "req-1"); asError(t, err).Status != 502 {
		t.Errorf("err = %v", err)
	}
	if es.requests() != 1 {
		t.Errorf("%d requests for a 500, want 1", es.requests())
	}
}

func TestRetryBackoffHonoursContext(t *testing.T) {
	es := newEngineServer(t, func(w http.ResponseWriter, _ *http.Request) { jsonError(w, 503, `{}`) })
	c := newTestClient(t, es.URL, Options{Retries: 100})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	var err error
	within(t, 3*time.Second, "retrying under a deadline", func() { _, err = c.Stream(ctx, testRequest(), "req-1") })
	if err == nil || es.requests() >= 100 {
		t.Errorf("err %v after %d requests", err, es.requests())
	}
}

func TestConnectionReuse(t *testing.T) {
	es := newEngineServer(t, sseEvents(tokenEvent(1), eventFinish, eventUsage, "[DONE]"))
	c := newTestClient(t, es.URL, Options{})
	for range 20 {
		s, err := c.Stream(context.Background(), testRequest(), "req-1")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := recvAll(t, s); err != io.EOF {
			t.Fatal(err)
		}
		s.Close()
	}
	if n := es.newConns.Load(); n != 1 {
		t.Errorf("%d connections for 20 sequential streams, want 1", n)
	}

	testWavesReuseConnections(t, 40)
}

// TestConnectionReuseAt500Streams is the scale the orchestrator runs at:
// the default transport must keep 500+ idle connections to one engine.
func TestConnectionReuseAt500Streams(t *testing.T) {
	if testing.Short() {
		t.Skip("520 concurrent streams; skipped with -short")
	}
	testWavesReuseConnections(t, 520)
}

// testWavesReuseConnections runs two waves of concurrent streams.
// Concurrent streams each hold a connection; the second wave reuses them.
// The engine holds every stream of a wave until the whole wave has
// arrived, so each wave really has that many streams open at once.
func testWavesReuseConnections(t *testing.T, wave int) {
	var arrived atomic.Int64
	barriers := []chan struct{}{make(chan struct{}), make(chan struct{})}
	ws := newEngineServer(t, func(w http.ResponseWriter, r *http.Request) {
		n := int(arrived.Add(1))
		writeSSE(w, tokenEvent(1))
		if b := (n - 1) / wave; b < len(barriers) {
			if n == (b+1)*wave {
				close(barriers[b])
			}
			select {
			case <-barriers[b]:
			case <-time.After(5 * time.Second):
			}
		}
		writeSSE(w, eventFinish, "[DONE]")
	})
	wc := newTestClient(t, ws.URL, Options{})
	run := func() {
		var wg sync.WaitGroup
		for range wave {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := wc.Stream(context.Background(), testRequest(), "req-1")
				if err != nil {
					t.Error(err)
					return
				}
				defer s.Close()
				if _, err := recvAll(t, s); err != io.EOF {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
	}
	run()
	first := int(ws.newConns.Load())
	// Connections go back to the pool just after their body's EOF is
	// delivered; let the last ones land.
	time.Sleep(100 * time.Millisecond)
	run()
	second := int(ws.newConns.Load())
	t.Logf("new connections: %d for the first wave of %d, %d more for the second", first, wave, second-first)
	// A request racing a connection's return to the pool may dial one
	// extra; more than a few means connections are not being reused.
	slack := 2 + wave/100
	if first < wave || first > wave+slack || second-first > slack {
		t.Errorf("connections after two waves of %d concurrent streams: %d then %d", wave, first, second)
	}
}

func TestNewRequestID(t *testing.T) {
	long := strings.Repeat("x", 500)
	for _, base := range []string{"chatcmpl-abc", "chatcmpl-a\nb", "chatcmpl-\u0001\u007f", `chatcmpl-"q\`, "chatcmpl-é", long, ""} {
		a, b := NewRequestID(base), NewRequestID(base)
		if a == b {
			t.Errorf("%q: two ids alike: %q", base, a)
		}
		if len(a) > maxRequestIDBase+15 {
			t.Errorf("%q: id of %d bytes", base, len(a))
		}
		for _, c := range []byte(a) {
			if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
				t.Errorf("%q: id %q holds %q", base, a, c)
			}
		}
		if clean := strings.Map(func(r rune) rune { return r }, base); clean == "chatcmpl-abc" && !strings.HasPrefix(a, "chatcmpl-abc-") {
			t.Errorf("a plain id keeps its base: %q", a)
		}
	}
}
