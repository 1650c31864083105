package server

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// fakeCollector is an OTLP/HTTP trace receiver: it decodes the protobuf
// export requests and keeps span names by trace id.
type fakeCollector struct {
	mu    sync.Mutex
	spans map[string][]string // trace id (hex) -> span names
}

func (c *fakeCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.URL.Path != "/v1/traces" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				id := hex.EncodeToString(sp.TraceId)
				c.spans[id] = append(c.spans[id], sp.Name)
			}
		}
	}
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

func (c *fakeCollector) names(traceID string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.spans[traceID]...)
}

// engineHeaders records the traceparent of every request the engine gets.
type engineHeaders struct {
	mu    sync.Mutex
	byURL map[string][]string
}

func (e *engineHeaders) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.byURL[r.URL.Path] = append(e.byURL[r.URL.Path], r.Header.Get("traceparent"))
		e.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (e *engineHeaders) get(path string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.byURL[path]...)
}

const clientTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"

func chatWithTraceparent(t *testing.T, url, content string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/v1/chat/completions",
		strings.NewReader(`{"model":"qwen","messages":[{"role":"user","content":"`+content+`"}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+clientTraceID+"-00f067aa0ba902b7-01")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
}

func TestTracingExportsSpansAndPropagatesToEngine(t *testing.T) {
	col := &fakeCollector{spans: map[string][]string{}}
	cs := httptest.NewServer(col)
	defer cs.Close()
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(cs.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(50*time.Millisecond)))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	eh := &engineHeaders{byURL: map[string][]string{}}
	env := newOpenAIEnvWith(t, "", envOptions{wrapEngine: eh.wrap, edit: func(c *Config) { c.TracerProvider = tp }})

	chatWithTraceparent(t, env.url, "what is 2+2")
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	names := strings.Join(col.names(clientTraceID), ",")
	for _, want := range []string{"POST /v1/chat/completions", "render", "engine"} {
		if !strings.Contains(","+names+",", ","+want+",") {
			t.Errorf("collector lacks span %q in the client's trace; got [%s]", want, names)
		}
	}
	tps := eh.get("/inference/v1/generate")
	if len(tps) != 1 || !strings.HasPrefix(tps[0], "00-"+clientTraceID+"-") || strings.Contains(tps[0], "00f067aa0ba902b7") {
		t.Errorf("engine traceparent %q: want the client's trace with vrender's engine span as parent", tps)
	}
}

func TestTraceparentPassesThroughWithTracingOff(t *testing.T) {
	eh := &engineHeaders{byURL: map[string][]string{}}
	env := newOpenAIEnvWith(t, "", envOptions{wrapEngine: eh.wrap})
	chatWithTraceparent(t, env.url, "what is 2+2")
	tps := eh.get("/inference/v1/generate")
	if len(tps) != 1 || tps[0] != "00-"+clientTraceID+"-00f067aa0ba902b7-01" {
		t.Errorf("engine traceparent %q, want the client's unchanged", tps)
	}

	// Without an incoming traceparent and tracing off, none is invented.
	req, _ := http.NewRequest("POST", env.url+"/v1/chat/completions",
		strings.NewReader(`{"model":"qwen","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if tps := eh.get("/inference/v1/generate"); len(tps) != 2 || tps[1] != "" {
		t.Errorf("engine traceparent without tracing or client trace: %q", tps)
	}
}
