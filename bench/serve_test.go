package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeOpenAI is an OpenAI-style streaming server with scripted timing:
// after ttft a role chunk and the first token, then a token every gap, then
// the usage chunk and [DONE]. X-Fake-Mode selects a failure.
type fakeOpenAI struct {
	ttft, gap time.Duration
	procRoot  string // when set, every request adds 10 ticks of CPU to pid 4242's stat file

	mu          sync.Mutex
	bodies      []map[string]any
	headers     []http.Header
	inFlight    int
	maxInFlight int
	served      int // requests that streamed tokens
	cpuTicks    int
}

const fakePID = 4242

func (f *fakeOpenAI) writeStat() error {
	line := fmt.Sprintf("%d (fake server) S 1 1 1 0 -1 0 0 0 0 0 %d 0 0 0 20 0 1 0 1 0 0\n", fakePID, f.cpuTicks)
	return os.WriteFile(filepath.Join(f.procRoot, fmt.Sprint(fakePID), "stat"), []byte(line), 0o644)
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/metrics" {
		f.mu.Lock()
		events := f.served * 8 // 8 events per request, each in (0.1, 0.5] ms
		f.mu.Unlock()
		fmt.Fprintf(w, "# TYPE %[1]s histogram\n%[1]s_bucket{le=\"0.0001\"} 0\n%[1]s_bucket{le=\"0.0005\"} %[2]d\n%[1]s_bucket{le=\"+Inf\"} %[2]d\n%[1]s_sum %[3]g\n%[1]s_count %[2]d\n",
			AddedLatencyMetric, events, float64(events)*0.0003)
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.headers = append(f.headers, r.Header.Clone())
	f.inFlight++
	f.maxInFlight = max(f.maxInFlight, f.inFlight)
	f.mu.Unlock()
	// Leave the count before the last write: once the client has read
	// [DONE] it may send its next request before this handler returns.
	var leave sync.Once
	left := func() { leave.Do(func() { f.mu.Lock(); f.inFlight--; f.mu.Unlock() }) }
	defer left()

	mode := r.Header.Get("X-Fake-Mode")
	if mode == "500" {
		http.Error(w, `{"error":{"message":"boom"}}`, http.StatusInternalServerError)
		return
	}
	chat := strings.HasSuffix(r.URL.Path, "/chat/completions")
	n := 0
	if v, ok := body["max_completion_tokens"].(float64); ok {
		n = int(v)
	} else if v, ok := body["max_tokens"].(float64); ok {
		n = int(v)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	send := func(s string) {
		if s == "[DONE]" {
			left()
		}
		io.WriteString(w, "data: "+s+"\n\n")
		fl.Flush()
	}
	token := func(i int) string {
		if chat {
			return fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"t%d "},"finish_reason":null}]}`, i)
		}
		return fmt.Sprintf(`{"id":"c","object":"text_completion","choices":[{"index":0,"text":"t%d ","finish_reason":null}]}`, i)
	}
	time.Sleep(f.ttft)
	if mode == "no-choices" {
		send(`{"choices":[],"usage":{"completion_tokens":0}}`)
		send("[DONE]")
		return
	}
	io.WriteString(w, ": ping\n\n") // comments are skipped
	if chat {
		send(`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`)
	}
	for i := range n {
		if i > 0 {
			time.Sleep(f.gap)
		}
		send(token(i))
		if mode == "drop" && i == 1 {
			panic(http.ErrAbortHandler) // cut the connection mid-stream
		}
	}
	switch mode {
	case "error-event":
		send(`{"error":{"message":"engine went away","type":"BadGatewayError","code":502}}`)
		send("[DONE]")
		return
	case "no-done":
		return
	}
	if mode != "no-usage" {
		send(fmt.Sprintf(`{"id":"c","choices":[],"usage":{"prompt_tokens":5,"total_tokens":%d,"completion_tokens":%d}}`, n+5, n))
	}
	f.mu.Lock()
	f.served++
	if f.procRoot != "" {
		f.cpuTicks += 10
		if err := f.writeStat(); err != nil {
			panic(err)
		}
	}
	f.mu.Unlock()
	send("[DONE]")
}

func serveOptions(url, endpoint string, reqs []SampleRequest) ServeOptions {
	return ServeOptions{
		BaseURL: url, Endpoint: endpoint, Model: "m", Requests: reqs, RequestRate: inf(), Burstiness: 1,
		PercentileMetrics: []string{"ttft", "tpot", "itl", "e2el"}, MetricPercentiles: []float64{50, 99},
	}
}

func inf() float64 { return float64Inf }

var float64Inf = func() float64 { var z float64; return 1 / z }()

func samples(n, outLen int) []SampleRequest {
	out := make([]SampleRequest, n)
	for i := range out {
		out[i] = SampleRequest{Prompt: fmt.Sprintf("prompt %d", i), PromptLen: 10, ExpectedOutputLen: outLen, RequestID: fmt.Sprintf("r-%d", i)}
	}
	return out
}

// The timings the client measures match what the server scripted.
func TestRunServeTimings(t *testing.T) {
	const ttft, gap = 60 * time.Millisecond, 25 * time.Millisecond
	for _, endpoint := range []string{"/v1/chat/completions", "/v1/completions"} {
		t.Run(endpoint, func(t *testing.T) {
			f := &fakeOpenAI{ttft: ttft, gap: gap}
			srv := httptest.NewServer(f)
			defer srv.Close()
			res, err := RunServe(context.Background(), serveOptions(srv.URL, endpoint, samples(3, 5)))
			if err != nil {
				t.Fatal(err)
			}
			m := res.Metrics
			if m.Completed != 3 || m.TotalOutput != 15 {
				t.Fatalf("completed %d, output %d; want 3, 15 (first error: %s)", m.Completed, m.TotalOutput, firstError(res.Outputs))
			}
			ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
			const slack = 40.0 // ms a loaded machine may add
			within := func(name string, got, lo, hi float64) {
				if got < lo || got > hi {
					t.Errorf("%s = %.2f ms, want in [%.2f, %.2f]", name, got, lo, hi)
				}
			}
			within("mean TTFT", m.TTFT.Mean, ms(ttft), ms(ttft)+slack)
			// Four gaps between five tokens: TPOT = (E2EL - TTFT) / 4 = gap.
			// A late read of the first token shortens the measured gaps, so
			// the lower bounds leave room for scheduling delays too.
			within("mean TPOT", m.TPOT.Mean, ms(gap)/2, ms(gap)+slack/2)
			within("mean E2EL", m.E2EL.Mean, ms(ttft+4*gap), ms(ttft+4*gap)+slack)
			for _, o := range res.Outputs {
				wantITL := 4
				if endpoint == "/v1/chat/completions" {
					wantITL = 5 // the role chunk has choices too, as with vLLM's server
				}
				if len(o.ITL) != wantITL {
					t.Errorf("%d ITLs, want %d", len(o.ITL), wantITL)
				}
				sum := 0.0
				for _, x := range o.ITL {
					sum += x
				}
				// ITLs add up to the time from the first to the last token chunk.
				within("sum of ITLs", sum*1000, ms(4*gap)-slack/2, ms(4*gap)+slack)
			}
			f.mu.Lock()
			body, hdr := f.bodies[len(f.bodies)-1], f.headers[len(f.headers)-1]
			f.mu.Unlock()
			if body["stream"] != true || body["stream_options"].(map[string]any)["include_usage"] != true || body["model"] != "m" {
				t.Errorf("body %v lacks stream/stream_options/model", body)
			}
			if endpoint == "/v1/chat/completions" {
				if body["max_completion_tokens"] != 5.0 || body["messages"] == nil {
					t.Errorf("chat body %v", body)
				}
			} else if body["max_tokens"] != 5.0 || !strings.HasPrefix(body["prompt"].(string), "prompt ") {
				t.Errorf("completions body %v", body)
			}
			if !strings.HasPrefix(hdr.Get("X-Request-Id"), "r-") {
				t.Errorf("X-Request-Id = %q", hdr.Get("X-Request-Id"))
			}
		})
	}
}

func TestRunServeFailures(t *testing.T) {
	cases := []struct {
		mode      string
		success   bool
		wantErr   string
		wantOuput int
	}{
		{"500", false, "HTTP 500", 0},
		{"error-event", false, "engine went away", 0},
		{"no-done", false, "without data: [DONE]", 0},
		{"drop", false, "", 0},
		{"no-choices", false, "never received a chunk with choices", 0},
		{"no-usage", true, "", 3 + 1}, // no usage: chunks with choices are counted (role chunk included)
	}
	f := &fakeOpenAI{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			o := serveOptions(srv.URL, "/v1/chat/completions", samples(1, 3))
			o.Headers = map[string]string{"X-Fake-Mode": tc.mode}
			res, err := RunServe(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			out := res.Outputs[0]
			if out.Success != tc.success || !strings.Contains(out.Error, tc.wantErr) || (!tc.success && out.Error == "") {
				t.Fatalf("output = success %v error %q; want success %v error containing %q", out.Success, out.Error, tc.success, tc.wantErr)
			}
			if res.Metrics.TotalOutput != tc.wantOuput {
				t.Errorf("total output %d, want %d", res.Metrics.TotalOutput, tc.wantOuput)
			}
		})
	}
}

func TestRunServeReadyCheck(t *testing.T) {
	f := &fakeOpenAI{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	o := serveOptions(srv.URL, "/v1/chat/completions", samples(2, 2))
	o.ReadyCheckTimeout = time.Millisecond
	o.Headers = map[string]string{"X-Fake-Mode": "500"}
	if _, err := RunServe(context.Background(), o); err == nil || !strings.Contains(err.Error(), "initial test run failed") {
		t.Fatalf("err = %v, want the initial test run to fail", err)
	}
	f.mu.Lock()
	before := len(f.bodies)
	f.mu.Unlock()
	o.Headers = nil
	o.NumWarmups = 3
	if _, err := RunServe(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if got := len(f.bodies) - before; got != 1+3+2 { // ready check, warm-ups, run
		t.Errorf("server saw %d requests, want 6", got)
	}
}

// The full run: concurrency limit, request bodies, server CPU from /proc,
// the added-latency histogram, the report and the result file.
func TestRunServeEndToEnd(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, fmt.Sprint(fakePID)), 0o755); err != nil {
		t.Fatal(err)
	}
	f := &fakeOpenAI{gap: 3 * time.Millisecond, procRoot: root}
	if err := f.writeStat(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f)
	defer srv.Close()

	o := serveOptions(srv.URL, "/v1/chat/completions", samples(24, 8))
	o.MaxConcurrency = 4
	o.IgnoreEOS = true
	o.APIKey = "sk-test"
	o.ExtraBody = map[string]any{"temperature": 0.0, "top_k": 5}
	o.Goodput = map[string]float64{"ttft": 10000}
	o.ReadyCheckTimeout = 5 * time.Second
	o.ServerPIDs = []int{fakePID}
	o.ProcRoot = root
	o.MetricsURL = srv.URL + "/metrics"
	res, err := RunServe(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Metrics
	if m.Completed != 24 || m.TotalOutput != 24*8 || m.TotalInput != 24*10 {
		t.Fatalf("completed %d output %d input %d (first error %q)", m.Completed, m.TotalOutput, m.TotalInput, firstError(res.Outputs))
	}
	if !near(m.RequestGoodput, m.RequestThroughput) {
		t.Errorf("goodput %g, want every request (%g)", m.RequestGoodput, m.RequestThroughput)
	}
	f.mu.Lock()
	maxInFlight, bodies, headers := f.maxInFlight, f.bodies, f.headers
	f.mu.Unlock()
	if maxInFlight != 4 {
		t.Errorf("server saw %d requests in flight at most, want 4", maxInFlight)
	}
	for i, b := range bodies {
		if b["ignore_eos"] != true || b["top_k"] != 5.0 || b["temperature"] != 0.0 {
			t.Errorf("body %d = %v, want ignore_eos, top_k and temperature", i, b)
		}
		if headers[i].Get("Authorization") != "Bearer sk-test" {
			t.Errorf("Authorization = %q", headers[i].Get("Authorization"))
		}
	}
	// 24 requests after the ready check, 10 ticks (0.1 s) of CPU each.
	if sc := res.ServerCPU; sc == nil || !near(sc.Seconds, 2.4) || !near(sc.OutputTokensPerCS, 24*8/2.4) {
		t.Errorf("server CPU = %+v, want 2.4 s and 80 tokens per CPU second", sc)
	}
	// 192 events, all in (0.1, 0.5] ms.
	if al := res.AddedLatency; al == nil || al.Events != 192 || !near(al.P50Ms, 0.3) || !near(al.P99Ms, 0.496) || !near(al.MeanMs, 0.3) ||
		!near(al.P90Ms, 0.46) || !near(al.P999Ms, 0.4996) {
		t.Errorf("added latency = %+v, want 192 events, p50 0.3 ms, p99 0.496 ms", al)
	}

	var report bytes.Buffer
	if err := WriteServeReport(&report, o, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"============ Serving Benchmark Result ============",
		"Successful requests:                     24",
		"Maximum request concurrency:             4",
		"Request goodput (req/s):",
		"P99 ITL (ms):",
		"---------------End-to-end Latency----------------",
		"Output tokens/s per server CPU core:     80",
		"Added latency per token, P99 (ms):       0.496",
	} {
		if !strings.Contains(report.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, report.String())
		}
	}

	data, err := ServeResultJSON(o, res, ResultMeta{Date: "20250101-000000", ModelID: "Qwen/Qwen3-8B", TokenizerID: "tok", NumPrompts: 24, Metadata: [][2]string{{"run", "ci"}}})
	if err != nil {
		t.Fatal(err)
	}
	wantKeys := []string{"date", "endpoint_type", "backend", "label", "model_id", "tokenizer_id", "num_prompts", "run",
		"request_rate", "burstiness", "max_concurrency", "duration", "completed", "failed", "total_input_tokens",
		"total_output_tokens", "request_throughput", "request_goodput", "output_throughput", "total_token_throughput",
		"max_output_tokens_per_s", "max_concurrent_requests"}
	for _, name := range []string{"ttft", "tpot", "itl", "e2el"} {
		wantKeys = append(wantKeys, "mean_"+name+"_ms", "median_"+name+"_ms", "std_"+name+"_ms", "p50_"+name+"_ms", "p99_"+name+"_ms")
	}
	wantKeys = append(wantKeys, "server_pids", "server_cpu_seconds", "server_cpu_cores", "output_tokens_per_server_cpu_second",
		"client_cpu_seconds", "added_latency_metric", "added_latency_events", "added_latency_mean_ms", "added_latency_p50_ms", "added_latency_p90_ms", "added_latency_p99_ms", "added_latency_p99.9_ms")
	if got := topLevelKeys(t, data); !slices.Equal(got, wantKeys) {
		t.Errorf("result keys:\n got %v\nwant %v", got, wantKeys)
	}
	var parsed map[string]any
	if err := json.Unmarshal(data, &parsed); err != nil {
		t.Fatal(err)
	}
	if parsed["request_rate"] != "inf" || parsed["backend"] != "openai-chat" || parsed["max_concurrency"] != 4.0 || parsed["completed"] != 24.0 || parsed["label"] != nil {
		t.Errorf("result values: %v", parsed)
	}

	detailed, err := ServeResultJSON(o, res, ResultMeta{SaveDetailed: true})
	if err != nil {
		t.Fatal(err)
	}
	keys := topLevelKeys(t, detailed)
	for _, k := range []string{"input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors"} {
		if !slices.Contains(keys, k) {
			t.Errorf("detailed result lacks %q", k)
		}
	}
	if got := DefaultResultFilename("", res.Backend, 2.5, 4, "Qwen/Qwen3-8B", "20250101-000000"); got != "openai-chat-2.5qps-concurrency4-Qwen3-8B-20250101-000000.json" {
		t.Errorf("DefaultResultFilename = %q", got)
	}
	if got := DefaultResultFilename("x", res.Backend, inf(), 0, "m", "d"); got != "x-infqps-m-d.json" {
		t.Errorf("DefaultResultFilename = %q", got)
	}
}

// topLevelKeys lists a JSON object's keys in document order.
func topLevelKeys(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// Poisson arrivals spread the sends over n/rate seconds.
func TestRunServeRequestRate(t *testing.T) {
	f := &fakeOpenAI{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	o := serveOptions(srv.URL, "/v1/completions", samples(10, 2))
	o.RequestRate = 50 // 10 requests over 0.2 s
	o.Seed = 1
	res, err := RunServe(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	last := 0.0
	for _, out := range res.Outputs {
		last = max(last, out.StartTime)
	}
	if last < 0.19 || res.Duration < 0.19 {
		t.Errorf("last send at %.3f s, run %.3f s; want about 0.2 s", last, res.Duration)
	}
}

// BenchmarkStreamClient measures the load generator's own cost per
// streamed token: a server replaying a prebuilt 256-token chat stream.
func BenchmarkStreamClient(b *testing.B) {
	var stream bytes.Buffer
	stream.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	for i := range 256 {
		fmt.Fprintf(&stream, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":" tok%d"},"logprobs":null,"finish_reason":null}]}`+"\n\n", i)
	}
	stream.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"Qwen/Qwen3-8B","choices":[],"usage":{"prompt_tokens":10,"total_tokens":266,"completion_tokens":256}}` + "\n\ndata: [DONE]\n\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(stream.Bytes())
	}))
	defer srv.Close()
	c := &streamClient{http: &http.Client{Transport: NewServeTransport(8)}, url: srv.URL + "/v1/chat/completions", chat: true, epoch: time.Now()}
	body := []byte(`{"model":"m"}`)
	b.SetBytes(int64(stream.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if out := c.do(context.Background(), body, "r", 10, 256); !out.Success || out.OutputTokens != 256 {
			b.Fatalf("output %+v", out.Error)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/256, "ns/token")
}
