package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/enginesim"
	"github.com/vrender/vrender/fleet"
	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/orchestrator"
	"github.com/vrender/vrender/orchestrator/engine"
	"github.com/vrender/vrender/parsers"
)

// Engine faults and client misbehaviour end to end: vrender in front of a
// simulated engine that refuses, fails, stalls or drops, with timeouts
// short enough for a unit test.

// Fault-test timeouts: the engine client's idle and first-event limits.
const (
	faultIdle       = 300 * time.Millisecond
	faultFirstEvent = 2 * time.Second
	// faultSlack is what a stream may take past its timeout to end.
	faultSlack = 2 * time.Second
)

type faultEnv struct {
	pool   *fleet.Pool
	url    string
	sim    *enginesim.Sim
	engine *httptest.Server
}

// newFaultEnv starts the simulated engine with simCfg and vrender in front
// of it (qwen3 and hermes parsers, no retries).
func newFaultEnv(t *testing.T, simCfg enginesim.Config) *faultEnv {
	t.Helper()
	return newFaultEnvPool(t, simCfg, fleet.HealthConfig{Interval: -1, EjectAfter: -1})
}

// newFaultEnvPool is newFaultEnv with the pool's health settings (a pool
// that ejects, for the isolation tests).
func newFaultEnvPool(t *testing.T, simCfg enginesim.Config, health fleet.HealthConfig) *faultEnv {
	t.Helper()
	m := testmodel.Load(t, "qwen3")
	simCfg.ServedModelName, simCfg.Logger = "qwen", discardLogger()
	sim, err := enginesim.New(m, simCfg)
	if err != nil {
		t.Fatal(err)
	}
	es := httptest.NewServer(sim.Handler())
	t.Cleanup(es.Close)
	pc := parsers.Config{ReasoningParser: "qwen3", ToolParser: "hermes", EnableAutoToolChoice: true}
	gen, err := DefaultGenerator(m)
	if err != nil {
		t.Fatal(err)
	}
	der, err := derender.New(m, derender.Config{Parsers: pc, MaxLogprobs: 20})
	if err != nil {
		t.Fatal(err)
	}
	client, err := engine.New(es.URL, engine.Options{Retries: -1, IdleTimeout: faultIdle,
		FirstEventTimeout: faultFirstEvent, ConnectTimeout: time.Second, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.CloseIdleConnections)
	pool, err := fleet.NewPool(fleet.PoolConfig{Health: health, Logger: discardLogger()}, client)
	if err != nil {
		t.Fatal(err)
	}
	orch, err := orchestrator.New(orchestrator.Config{Model: m, Generator: gen, Derender: der, Parsers: pc,
		Engines: pool, ModelName: "qwen", Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Model: m, ServedModelNames: []string{"qwen"}, Generator: gen, Derender: der,
		Orchestrator: orch, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &faultEnv{url: srv.URL, sim: sim, engine: es, pool: pool}
}

const (
	faultChat       = `{"model":"qwen","messages":[{"role":"user","content":"hi"}],"max_tokens":40}`
	faultChatStream = `{"model":"qwen","messages":[{"role":"user","content":"hi"}],"max_tokens":40,"stream":true}`
)

// postCtx posts body and returns the answer's status and whole body.
func postCtx(ctx context.Context, t *testing.T, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	return res.StatusCode, string(b)
}

// sseData splits an SSE body into its data payloads.
func sseData(body string) []string {
	var out []string
	for _, block := range strings.Split(body, "\n\n") {
		if d, ok := strings.CutPrefix(block, "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

func TestFaultEngineErrors(t *testing.T) {
	tests := []struct {
		name  string
		fault enginesim.Fault
		// want: the non-streaming status, and for the streaming request
		// either that status (fault before the stream) or 200 with an
		// error event carrying streamCode then [DONE].
		status, streamCode int
	}{
		{"refused connection", enginesim.Fault{Kind: enginesim.FaultRefuse}, 503, 0},
		{"500 before the stream", enginesim.Fault{Kind: enginesim.FaultError}, 502, 0},
		{"500 mid-stream", enginesim.Fault{Kind: enginesim.FaultError, AfterTokens: 3}, 502, 502},
		{"drop mid-stream", enginesim.Fault{Kind: enginesim.FaultDrop, AfterTokens: 3}, 502, 502},
		{"stall mid-stream", enginesim.Fault{Kind: enginesim.FaultStall, AfterTokens: 3}, 504, 504},
		{"stall before the first token", enginesim.Fault{Kind: enginesim.FaultStall}, 504, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newFaultEnv(t, enginesim.Config{Fault: tc.fault})
			ctx := t.Context()
			status, body := postCtx(ctx, t, env.url+"/v1/chat/completions", faultChat)
			if status != tc.status || !strings.Contains(body, `"error":{`) {
				t.Errorf("non-streaming: %d %s, want %d with an error body", status, body, tc.status)
			}
			start := time.Now()
			status, body = postCtx(ctx, t, env.url+"/v1/chat/completions", faultChatStream)
			took := time.Since(start)
			if took > faultFirstEvent+faultSlack {
				t.Errorf("streaming request took %v, past its timeouts", took)
			}
			if tc.streamCode == 0 {
				if status != tc.status || !strings.Contains(body, `"error":{`) {
					t.Errorf("streaming: %d %s, want %d with an error body", status, body, tc.status)
				}
				return
			}
			ev := sseData(body)
			if status != 200 || len(ev) < 3 || ev[len(ev)-1] != "[DONE]" {
				t.Fatalf("streaming: %d %q, want chunks, an error event and [DONE]", status, ev)
			}
			if code := errorEventCode(ev[len(ev)-2]); code != tc.streamCode {
				t.Errorf("error event %s, want code %d", ev[len(ev)-2], tc.streamCode)
			}
		})
	}
}

// errorEventCode is the code of an in-stream error event, 0 when the
// payload is not one.
func errorEventCode(payload string) int {
	var e struct {
		Error *struct {
			Message string `json:"message"`
			Code    int    `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(payload), &e) != nil || e.Error == nil || e.Error.Message == "" {
		return 0
	}
	return e.Error.Code
}

// A stalled engine stream ends, for the client, within the idle timeout
// plus slack: an error event, then [DONE]; and the engine request is
// dropped (the sim sees it aborted).
func TestFaultStallEndsWithinIdleTimeout(t *testing.T) {
	env := newFaultEnv(t, enginesim.Config{Fault: enginesim.Fault{Kind: enginesim.FaultStall, AfterTokens: 2}})
	start := time.Now()
	status, body := postCtx(t.Context(), t, env.url+"/v1/chat/completions", faultChatStream)
	took := time.Since(start)
	ev := sseData(body)
	if status != 200 || len(ev) < 2 || ev[len(ev)-1] != "[DONE]" || errorEventCode(ev[len(ev)-2]) != 504 {
		t.Fatalf("%d %q", status, ev)
	}
	if took < faultIdle || took > faultIdle+faultSlack {
		t.Errorf("stream ended after %v, want between %v and %v", took, faultIdle, faultIdle+faultSlack)
	}
	waitAborts(t, env.sim, 1)
}

// An engine that is not there at all: 503 quickly, before any stream.
func TestFaultEngineDown(t *testing.T) {
	env := newFaultEnv(t, enginesim.Config{})
	env.engine.Close()
	for _, body := range []string{faultChat, faultChatStream} {
		status, got := postCtx(t.Context(), t, env.url+"/v1/chat/completions", body)
		if status != 503 || !strings.Contains(got, `"error":{`) {
			t.Errorf("%d %s, want 503 with an error body", status, got)
		}
	}
}

// waitAborts waits until the sim has seen at least n aborted requests.
func waitAborts(t *testing.T, sim *enginesim.Sim, n int) []string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		a := sim.Aborts()
		if len(a) >= n {
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("engine saw %d aborts, want %d", len(a), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A client that goes away at each phase of a request: vrender stops, the
// engine request (if one was sent) is aborted, and nothing keeps running.
func TestFaultClientDisconnects(t *testing.T) {
	tests := []struct {
		name string
		cfg  enginesim.Config
		// cut decides when the client hangs up.
		cut        func(t *testing.T, conn net.Conn, r *bufio.Reader)
		wantEngine bool // an engine request was sent, so must be aborted
	}{
		{"before render (body half sent)", enginesim.Config{}, nil, false},
		{"while the engine is connecting", enginesim.Config{FirstTokenLatency: 5 * time.Second},
			func(t *testing.T, _ net.Conn, _ *bufio.Reader) { time.Sleep(300 * time.Millisecond) }, true},
		{"after the first chunk", enginesim.Config{TokenLatency: 200 * time.Millisecond},
			readFirstChunk, true},
		{"during a stall", enginesim.Config{Fault: enginesim.Fault{Kind: enginesim.FaultStall, AfterTokens: 2}},
			func(t *testing.T, c net.Conn, r *bufio.Reader) {
				readFirstChunk(t, c, r)
				time.Sleep(faultIdle / 3)
			}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newFaultEnv(t, tc.cfg)
			conn, err := net.Dial("tcp", strings.TrimPrefix(env.url, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			body := faultChatStream
			req := "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
				"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
			if tc.cut == nil {
				// Hang up with half the body sent.
				_, err = io.WriteString(conn, req+body[:len(body)/2])
			} else {
				_, err = io.WriteString(conn, req+body)
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.cut != nil {
				tc.cut(t, conn, bufio.NewReader(conn))
			} else {
				time.Sleep(100 * time.Millisecond)
			}
			conn.Close()
			if !tc.wantEngine {
				time.Sleep(200 * time.Millisecond)
				if n := len(env.sim.Requests()); n != 0 {
					t.Errorf("engine got %d requests for a request the client abandoned mid-body", n)
				}
				return
			}
			// The sim counts the dropped connection and the abort call
			// alike; both must name the one request it got.
			ids := waitAborts(t, env.sim, 1)
			if n := len(env.sim.Requests()); n != 1 {
				t.Fatalf("engine got %d requests, want 1", n)
			}
			for _, id := range ids {
				if id != ids[0] {
					t.Errorf("aborts %q name more than the one request", ids)
				}
			}
		})
	}
}

// readFirstChunk reads the response headers and the first SSE frame.
func readFirstChunk(t *testing.T, conn net.Conn, r *bufio.Reader) {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		if strings.HasPrefix(line, "data: ") {
			return
		}
	}
}

// A client that reads its stream slowly (here: not at all for a while)
// holds up only its own stream: vrender stops reading the engine once the
// socket buffers are full, so memory stays bounded, other streams go on,
// and the slow client still gets its whole answer.
func TestFaultSlowClient(t *testing.T) {
	// A long answer at full speed: ~2000 tokens.
	env := newFaultEnv(t, enginesim.Config{})
	slow := `{"model":"qwen","messages":[{"role":"user","content":"hi"}],"max_tokens":2000,"ignore_eos":true,"stream":true}`
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	// A raw connection with a tiny receive buffer, so back-pressure
	// shows quickly.
	conn, err := net.Dial("tcp", strings.TrimPrefix(env.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096)
	}
	req := "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n" +
		"Content-Length: " + strconv.Itoa(len(slow)) + "\r\n\r\n" + slow
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	// Let the server run into the full socket.
	time.Sleep(500 * time.Millisecond)

	// Meanwhile another stream is served at full speed.
	start := time.Now()
	status, body := postCtx(t.Context(), t, env.url+"/v1/chat/completions", faultChatStream)
	if ev := sseData(body); status != 200 || len(ev) == 0 || ev[len(ev)-1] != "[DONE]" {
		t.Fatalf("other stream: %d %q", status, ev)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("another stream took %v while a client was slow", took)
	}

	var during runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&during)
	grown := int64(during.HeapInuse) - int64(before.HeapInuse)
	t.Logf("heap in use while the slow client holds its stream: %+d KiB", grown/1024)
	if grown > 8<<20 {
		t.Errorf("heap grew %d bytes while a client was slow: buffering is not bounded", grown)
	}

	// The slow client now reads everything: the answer is whole.
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	all, err := io.ReadAll(conn)
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("read the slow stream: %v", err)
	}
	if !strings.Contains(string(all), "data: [DONE]") {
		t.Fatalf("slow client's stream is not whole (%d bytes, tail %q)", len(all), tail(string(all), 200))
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
