package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/internal/telemetry"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/server"
)

// Targets of the parsers-and-derender issue.
const (
	// TargetStreamRatio bounds one-token streaming over batch CPU.
	TargetStreamRatio = 1.2
	// TargetScaleRatio bounds per-token cost at the largest size over the
	// smallest.
	TargetScaleRatio = 1.3
)

// DerenderOptions configures a derender benchmark run.
type DerenderOptions struct {
	ModelDir string // a Qwen3-family tokenizer (the output uses its <think> and <tool_call> markup)
	Sizes    []int  // output lengths in tokens; default 1k, 4k, 16k
	// MinTime repeats each measurement until it lasts this long (at least
	// one run): the machine is shared, so short runs measure noise.
	MinTime time.Duration
	// HTTP also measures the endpoint (default on in the CLI).
	HTTP bool
	// HTTPHistoryMax skips the HTTP history-only client above this many
	// tokens (0: never): its bodies grow with the output, so a stream costs
	// O(n²) and a 16k one takes minutes.
	HTTPHistoryMax int
	// HTTPServe, when set, also measures the one-token checkpoint call
	// (first size) against a `vrender serve` child process.
	HTTPServe *HTTPOptions
	// FamilyTokens, when positive, also measures every parser family's
	// workloads (DerenderFamilies, FamilyKinds) at about this many tokens,
	// their tokenizers found in ModelsDir; Families picks some (nil: all).
	FamilyTokens int
	ModelsDir    string
	Families     []string
	// FamilyHTTPServe, when set, measures each family over HTTP against a
	// child server of its own (ModelDir and parser flags are the family's;
	// Server.Args are added after them).
	FamilyHTTPServe *HTTPOptions
}

// DerenderReport is the result of a run; it is also the --json output.
type DerenderReport struct {
	Model      string `json:"model"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	Parsers    string `json:"parsers"`
	// Clock is what the ns figures measure: process CPU time (user+system,
	// GC included) over the timed runs.
	Clock   string           `json:"clock"`
	Results []DerenderResult `json:"results"`
	// HTTP is the over-HTTP measurement of a child server (--http).
	HTTP *HTTPReport `json:"http,omitempty"`
	// Scale compares per-token (per-call) cost at the largest size with
	// the smallest: API stream, session, HTTP echo, HTTP checkpoint-only.
	ScaleAPI, ScaleSession, ScaleHTTPEcho, ScaleHTTPCheckpoint float64 `json:",omitempty"`
	// Stop is per-token cost with 4,000 stop strings of 1,000 characters
	// over none, at the largest size.
	Stop *StopResult `json:"stop,omitempty"`
	// Families are the parser-family workloads; FamilyHTTP their
	// over-HTTP tables.
	Families   []FamilyResult `json:"families,omitempty"`
	FamilyHTTP []FamilyHTTP   `json:"family_http,omitempty"`
}

// DerenderResult is one output size.
type DerenderResult struct {
	Tokens int `json:"tokens"`
	// Package API, ns per output token: one batch call, and one-token
	// streaming where the client echoes stream_state as returned (prompt
	// and chat_request re-sent on every call).
	BatchNsPerToken  float64 `json:"batch_ns_per_token"`
	StreamNsPerToken float64 `json:"stream_ns_per_token"`
	StreamRatio      float64 `json:"stream_over_batch"`
	// Session is the same output pushed one token at a time through an
	// in-process ChatSession (the orchestrator's path): no stream_state.
	SessionNsPerToken float64 `json:"session_ns_per_token"`
	SessionRatio      float64 `json:"session_over_batch"`
	// The other clients through the package API: history only (vLLM's
	// state model drops vrender_checkpoint, so the history is replayed or
	// found by its digest), checkpoint only on a replica that holds the
	// live state, and on one that does not (every call restores).
	HistoryNsPerToken        float64 `json:"history_ns_per_token"`
	CheckpointNsPerToken     float64 `json:"checkpoint_ns_per_token"`
	CheckpointColdNsPerToken float64 `json:"checkpoint_cold_ns_per_token"`
	HTTPBatchNsPerToken      float64 `json:"http_batch_ns_per_token,omitempty"`
	HTTPEchoNsPerCall        float64 `json:"http_echo_ns_per_call,omitempty"`
	HTTPHistoryNsPerCall     float64 `json:"http_history_ns_per_call,omitempty"`
	HTTPCheckpointNsPerCall  float64 `json:"http_checkpoint_ns_per_call,omitempty"`
	EchoMaxBodyBytes         int     `json:"echo_max_body_bytes,omitempty"`
	HistoryMaxBodyBytes      int     `json:"history_max_body_bytes,omitempty"`
	CheckpointMaxBodyBytes   int     `json:"checkpoint_max_body_bytes,omitempty"`
	CheckpointMaxLen         int     `json:"checkpoint_max_len"`
	StreamEqualsBatch        bool    `json:"stream_equals_batch"`
	CheckpointHitsOfCalls    string  `json:"checkpoint_hits_of_calls"`
}

const derenderChatRequest = `{"messages":[{"role":"user","content":"write it"}],"tools":[{"type":"function","function":{"name":"write_file","parameters":{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}}}}}]}`

// derenderPrompt is the Qwen3 chat prompt of derenderChatRequest's message.
var derenderPrompt = []int{151644, 872, 198, 4934, 432, 151645, 198, 151644, 77091, 198}

// DerenderOutput is about n tokens of model output: reasoning, then a
// hermes tool call whose argument is long, then the end-of-turn token.
func DerenderOutput(m *model.Model, n int) []int {
	end := 151645 // Qwen3's <|im_end|>
	if len(m.EOSTokenIDs) > 0 {
		end = m.EOSTokenIDs[0]
	}
	build := func(k int) []int {
		var b strings.Builder
		b.WriteString("<think>\n")
		for i := range k {
			fmt.Fprintf(&b, "Step %d: check the file layout. ", i)
		}
		b.WriteString("\n</think>\n\n<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"main.go\", \"content\": \"")
		for i := range k {
			fmt.Fprintf(&b, "x%d := f(%d)\\n", i, i)
		}
		b.WriteString("\"}}\n</tool_call>")
		return append(m.Tokenizer.Encode(b.String(), false), end)
	}
	per := float64(len(build(200))) / 200
	return build(max(int(float64(n)/per), 1))
}

// Derender measures streaming against batch derender on one core.
func Derender(ctx context.Context, opts DerenderOptions) (*DerenderReport, error) {
	if len(opts.Sizes) == 0 {
		opts.Sizes = []int{1 << 10, 4 << 10, 16 << 10}
	}
	m, err := model.Load(ctx, opts.ModelDir, model.Options{})
	if err != nil {
		return nil, fmt.Errorf("bench derender: %w", err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	cr, err := protocol.DecodeChatCompletionRequest([]byte(derenderChatRequest))
	if err != nil {
		return nil, fmt.Errorf("bench derender: %w", err)
	}
	report := &DerenderReport{Model: opts.ModelDir, GOMAXPROCS: 1, Parsers: "qwen3 + hermes (auto tool choice)",
		Clock: "process CPU time (getrusage), GOMAXPROCS=1; batch, session, stream, HTTP echo/checkpoint: fastest of 15 rounds; ratios: median of back-to-back rounds"}
	for _, n := range opts.Sizes {
		r, err := measureDerenderSize(ctx, m, cr, opts, n)
		if err != nil {
			return nil, err
		}
		report.Results = append(report.Results, r)
	}
	stopEngine, err := newBenchEngine(m, benchParsers, 0)
	if err != nil {
		return nil, err
	}
	if report.Stop, err = measureStop(ctx, stopEngine, cr, DerenderOutput(m, opts.Sizes[len(opts.Sizes)-1]), stopRounds); err != nil {
		return nil, err
	}
	report.setScales(opts.HTTP)
	if opts.HTTPServe != nil && len(opts.Sizes) > 0 {
		if err := measureDerenderServe(ctx, *opts.HTTPServe, m, opts.Sizes[0], report); err != nil {
			return report, err
		}
	}
	if opts.FamilyTokens > 0 {
		if err := measureFamilies(ctx, opts, report); err != nil {
			return report, err
		}
	}
	return report, nil
}

// measureDerenderSize measures one output size: batch, session and stream
// in alternating rounds, then the history and checkpoint echo modes, warm
// and cold, and (with opts.HTTP) the in-process HTTP handler.
func measureDerenderSize(ctx context.Context, m *model.Model, cr *protocol.ChatCompletionRequest, opts DerenderOptions, n int) (DerenderResult, error) {
	newEngine := func(cache int) (*derender.Engine, error) { return newBenchEngine(m, benchParsers, cache) }
	ids := DerenderOutput(m, n)
	r := DerenderResult{Tokens: len(ids)}
	warm, err := newEngine(256)
	if err != nil {
		return r, err
	}
	cold, err := newEngine(0)
	if err != nil {
		return r, err
	}
	c := &apiClient{cr: cr, prompt: derenderPrompt, ids: ids}
	var batch *protocol.ChatCompletionResponse
	perTok := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(len(ids)) }
	if batch, err = c.batch(ctx, warm); err != nil {
		return r, err
	}
	var acc parsers.Accumulator
	if acc, err = c.stream(ctx, warm, echoAll, true); err != nil {
		return r, err
	}
	r.StreamEqualsBatch = sameAnswer(acc, batch)
	if acc, err = c.session(warm, true); err != nil {
		return r, err
	}
	if !sameAnswer(acc, batch) {
		r.StreamEqualsBatch = false
	}
	// The three the ratios compare run in alternating rounds: each
	// ratio is the median of its rounds' ratios, measured back to
	// back, so a neighbour's load on a shared machine shifts both
	// sides of one alike; the ns figures are each one's fastest round.
	rounds, err := interleave(ctx, opts.MinTime,
		func() error { _, err := c.batch(ctx, warm); return err },
		func() error { _, err := c.session(warm, false); return err },
		func() error { _, err := c.stream(ctx, warm, echoAll, false); return err })
	if err != nil {
		return r, err
	}
	r.CheckpointMaxLen = c.maxCkpt
	r.BatchNsPerToken = perTok(fastest(rounds, 0))
	r.SessionNsPerToken, r.SessionRatio = perTok(fastest(rounds, 1)), medianRatio(rounds, 1, 0)
	r.StreamNsPerToken, r.StreamRatio = perTok(fastest(rounds, 2)), medianRatio(rounds, 2, 0)
	for _, mode := range []struct {
		e    *derender.Engine
		echo echoMode
		out  *float64
	}{{warm, echoHistory, &r.HistoryNsPerToken}, {warm, echoCheckpoint, &r.CheckpointNsPerToken}, {cold, echoCheckpoint, &r.CheckpointColdNsPerToken}} {
		h0, _ := mode.e.CheckpointStats()
		runs0 := c.runs
		d, err := repeat(ctx, opts.MinTime, func() error { _, err := c.stream(ctx, mode.e, mode.echo, false); return err })
		if err != nil {
			return r, err
		}
		*mode.out = perTok(d)
		if acc, err = c.stream(ctx, mode.e, mode.echo, true); err != nil {
			return r, err
		}
		if !sameAnswer(acc, batch) {
			r.StreamEqualsBatch = false
		}
		if mode.e == warm && mode.echo == echoCheckpoint {
			h1, _ := mode.e.CheckpointStats()
			r.CheckpointHitsOfCalls = fmt.Sprintf("%d/%d", h1-h0, (c.runs-runs0)*len(ids))
		}
	}
	if opts.HTTP {
		history := opts.HTTPHistoryMax == 0 || len(ids) <= opts.HTTPHistoryMax
		h, err := newBenchHandler(m, benchParsers)
		if err != nil {
			return r, err
		}
		if err := measureHTTP(ctx, h, derenderChatRequest, c, opts.MinTime, history, &r); err != nil {
			return r, err
		}
	}
	return r, nil
}

// setScales sets how the per-token costs grow from the first size to the last.
func (d *DerenderReport) setScales(http bool) {
	if k := len(d.Results); k > 1 {
		first, last := d.Results[0], d.Results[k-1]
		d.ScaleAPI = last.StreamNsPerToken / first.StreamNsPerToken
		d.ScaleSession = last.SessionNsPerToken / first.SessionNsPerToken
		if http {
			d.ScaleHTTPEcho = last.HTTPEchoNsPerCall / first.HTTPEchoNsPerCall
			d.ScaleHTTPCheckpoint = last.HTTPCheckpointNsPerCall / first.HTTPCheckpointNsPerCall
		}
	}
}

// measureDerenderServe measures a 1-token derender call over a served
// vrender and compares it with the in-process checkpoint figure.
func measureDerenderServe(ctx context.Context, serve HTTPOptions, m *model.Model, size int, report *DerenderReport) error {
	rep, err := RunHTTP(ctx, serve, []Workload{DerenderCallWorkload("derender 1-token call", derenderChatRequest, derenderPrompt, DerenderOutput(m, size))})
	report.HTTP = rep
	if err != nil {
		return err
	}
	inProcess := 0.0
	if len(report.Results) > 0 {
		inProcess = report.Results[0].HTTPCheckpointNsPerCall
	}
	rep.Compare("derender 1-token call", "checkpoint", inProcess, 0, "≤1.3x floor")
	return nil
}

// benchParsers are the parsers of the benchmark's output.
var benchParsers = parsers.Config{ReasoningParser: "qwen3", ToolParser: "hermes", EnableAutoToolChoice: true}

func newBenchEngine(m *model.Model, cfg parsers.Config, cache int) (*derender.Engine, error) {
	e, err := derender.New(m, derender.Config{Parsers: cfg, MaxLogprobs: 20, CacheSize: cache})
	if err != nil {
		return nil, fmt.Errorf("bench derender: %w", err)
	}
	return e, nil
}

// cpuTime is the process's user plus system CPU time, 0 where the OS
// cannot say.
func cpuTime() time.Duration {
	cpu, _ := telemetry.ProcessCPU()
	return cpu
}

// repeat runs f at least once and until minTime of CPU has passed, and
// returns the CPU time per run. A GC before the timed runs keeps garbage
// from the previous measurement out of this one.
func repeat(ctx context.Context, minTime time.Duration, f func() error) (time.Duration, error) {
	runtime.GC()
	start, runs := cpuTime(), 0
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if err := f(); err != nil {
			return 0, err
		}
		runs++
		if d := cpuTime() - start; d >= minTime {
			return d / time.Duration(runs), nil
		}
	}
}

// interleaveRounds is how many rounds interleave splits its time into.
const interleaveRounds = 15

// interleave runs each f in turn, round after round, for about minTime
// of CPU each in all, and returns the CPU time per run of each f in each
// round (rounds[r][i]).
func interleave(ctx context.Context, minTime time.Duration, fs ...func() error) ([][]time.Duration, error) {
	rounds := make([][]time.Duration, interleaveRounds)
	for r := range rounds {
		rounds[r] = make([]time.Duration, len(fs))
		for i, f := range fs {
			d, err := repeat(ctx, minTime/interleaveRounds, f)
			if err != nil {
				return nil, err
			}
			rounds[r][i] = d
		}
	}
	return rounds, nil
}

// fastest is f i's fastest round.
func fastest(rounds [][]time.Duration, i int) time.Duration {
	best := rounds[0][i]
	for _, r := range rounds[1:] {
		best = min(best, r[i])
	}
	return best
}

// medianRatio is the median over rounds of f i's time over f j's.
func medianRatio(rounds [][]time.Duration, i, j int) float64 {
	ratios := make([]float64, len(rounds))
	for k, r := range rounds {
		ratios[k] = float64(r[i]) / float64(r[j])
	}
	slices.Sort(ratios)
	if n := len(ratios); n%2 == 0 {
		return (ratios[n/2-1] + ratios[n/2]) / 2
	}
	return ratios[len(ratios)/2]
}

type echoMode int

const (
	echoAll        echoMode = iota // stream_state as returned, prompt every call
	echoHistory                    // vLLM's state model: vrender_checkpoint dropped
	echoCheckpoint                 // only the checkpoint, no prompt after the first call
)

// apiClient drives the derender package API as a client would.
type apiClient struct {
	cr      *protocol.ChatCompletionRequest
	prompt  []int
	ids     []int
	maxCkpt int
	runs    int
}

func (c *apiClient) batch(ctx context.Context, e *derender.Engine) (*protocol.ChatCompletionResponse, error) {
	stop := "stop"
	return e.Chat(ctx, &protocol.DerenderChatRequest{
		GenerateResponse: protocol.GenerateResponse{RequestID: "r", Choices: []protocol.GenerateChoice{{TokenIDs: c.ids, FinishReason: &stop}}},
		PromptTokenIDs:   c.prompt, ChatRequest: c.cr,
	}, "m")
}

// stream derenders the output one token per call; with collect it
// accumulates the answer (to check it), without (the timed runs) the
// client does no more than build the next request, as a router would.
func (c *apiClient) stream(ctx context.Context, e *derender.Engine, echo echoMode, collect bool) (parsers.Accumulator, error) {
	var acc parsers.Accumulator
	var state *protocol.DerenderStreamState
	stop := "stop"
	c.runs++
	for i, id := range c.ids {
		ch := protocol.GenerateChoice{TokenIDs: []int{id}}
		if i == len(c.ids)-1 {
			ch.FinishReason = &stop
		}
		req := &protocol.DerenderChatStreamRequest{GenerateChunk: protocol.GenerateResponse{RequestID: "r",
			Choices: []protocol.GenerateChoice{ch}}, StreamState: state, PromptTokenIDs: c.prompt, ChatRequest: c.cr}
		if echo == echoCheckpoint && state != nil {
			req.PromptTokenIDs = nil
		}
		res, err := e.ChatStream(ctx, req, "m")
		if err != nil {
			return acc, fmt.Errorf("bench derender: stream call %d: %w", i, err)
		}
		c.maxCkpt = max(c.maxCkpt, len(res.StreamState.VrenderCheckpoint))
		switch echo {
		case echoAll:
			state = &res.StreamState
		case echoHistory:
			state = &res.StreamState
			state.VrenderCheckpoint = ""
		case echoCheckpoint:
			state = &protocol.DerenderStreamState{VrenderCheckpoint: res.StreamState.VrenderCheckpoint}
		}
		if collect {
			acc.Add(derender.ParserDelta(&res.Chunk.Choices[0].Delta, nil))
		}
	}
	return acc, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// sameAnswer checks a stream reached the batch answer, so the benchmark
// measures correct work.
func sameAnswer(acc parsers.Accumulator, batch *protocol.ChatCompletionResponse) bool {
	if batch == nil || len(batch.Choices) != 1 {
		return false
	}
	msg := batch.Choices[0].Message
	calls := acc.Calls()
	if len(calls) != len(msg.ToolCalls) || acc.Reasoning() != deref(msg.Reasoning) || acc.Content() != deref(msg.Content) {
		return false
	}
	for i, c := range calls {
		if c.Name != msg.ToolCalls[i].Function.Name || c.Arguments != msg.ToolCalls[i].Function.Arguments {
			return false
		}
	}
	return true
}

// measureHTTP times the chat derender endpoint in process (the handler
// called directly, no socket): a batch call, and one-token streaming with
// the three clients. Only ServeHTTP is timed: building each request and
// reading its reply are the client's work and run outside the clock.
func measureHTTP(ctx context.Context, h http.Handler, chatJSON string, c *apiClient, minTime time.Duration, history bool, r *DerenderResult) error {
	batchBody := httpBatchBody(chatJSON, c.prompt, c.ids)
	d, err := repeatServer(ctx, minTime, func(clk *serverClock) error { _, err := clk.post(h, derenderPath, batchBody); return err })
	if err != nil {
		return err
	}
	r.HTTPBatchNsPerToken = float64(d.Nanoseconds()) / float64(len(c.ids))
	for _, mode := range []struct {
		echo    echoMode
		perCall *float64
		maxBody *int
	}{{echoAll, &r.HTTPEchoNsPerCall, &r.EchoMaxBodyBytes}, {echoHistory, &r.HTTPHistoryNsPerCall, &r.HistoryMaxBodyBytes},
		{echoCheckpoint, &r.HTTPCheckpointNsPerCall, &r.CheckpointMaxBodyBytes}} {
		if mode.echo == echoHistory && !history {
			continue
		}
		// The echoing clients' per-call cost is compared across output
		// lengths, so it gets the same fastest-round treatment as the
		// ratios; the history client (seconds per run) runs once.
		measure := bestOfServer
		if mode.echo == echoHistory {
			measure = repeatServer
		}
		d, err := measure(ctx, minTime, func(clk *serverClock) error {
			return httpStream(clk, h, chatJSON, c.prompt, c.ids, mode.echo, mode.maxBody)
		})
		if err != nil {
			return err
		}
		*mode.perCall = float64(d.Nanoseconds()) / float64(len(c.ids))
	}
	return nil
}

// httpBatchBody is the batch /v1/chat/completions/derender body of ids.
func httpBatchBody(chatJSON string, prompt, ids []int) []byte {
	return jsonBody(map[string]any{"model": "m", "prompt_token_ids": prompt,
		"chat_request":      json.RawMessage(chatJSON),
		"generate_response": map[string]any{"request_id": "r", "choices": []any{map[string]any{"index": 0, "token_ids": ids, "finish_reason": "stop"}}}})
}

// newBenchHandler is the server with a warm derender engine, its access
// log discarded.
func newBenchHandler(m *model.Model, cfg parsers.Config) (http.Handler, error) {
	e, err := newBenchEngine(m, cfg, 256)
	if err != nil {
		return nil, err
	}
	h, err := server.New(server.Config{Model: m, ServedModelNames: []string{"m"}, Derender: e,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, fmt.Errorf("bench derender: %w", err)
	}
	return h, nil
}

// httpStream streams ids one per call through clk, which times only the
// handler: the client's JSON work (echoing the state as raw bytes, except
// for dropping or keeping fields) is outside it.
func httpStream(clk *serverClock, h http.Handler, chatJSON string, prompt, ids []int, echo echoMode, maxBody *int) error {
	state := json.RawMessage("null")
	promptJSON, _ := json.Marshal(prompt)
	var buf bytes.Buffer
	for i, id := range ids {
		buf.Reset()
		buf.WriteString(`{"stream":true,"model":"m","chat_request":`)
		buf.WriteString(chatJSON)
		if echo != echoCheckpoint || i == 0 {
			buf.WriteString(`,"prompt_token_ids":`)
			buf.Write(promptJSON)
		}
		fr := "null"
		if i == len(ids)-1 {
			fr = `"stop"`
		}
		fmt.Fprintf(&buf, `,"stream_state":%s,"generate_chunk":{"request_id":"r","choices":[{"index":0,"token_ids":[%d],"finish_reason":%s}]}}`, state, id, fr)
		*maxBody = max(*maxBody, buf.Len())
		out, err := clk.post(h, derenderPath, buf.Bytes())
		if err != nil {
			return fmt.Errorf("call %d: %w", i, err)
		}
		var res struct {
			StreamState json.RawMessage `json:"stream_state"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return err
		}
		switch echo {
		case echoAll:
			state = res.StreamState
		case echoHistory:
			var st map[string]json.RawMessage
			if err := json.Unmarshal(res.StreamState, &st); err != nil {
				return err
			}
			delete(st, "vrender_checkpoint")
			state, _ = json.Marshal(st)
		case echoCheckpoint:
			var st struct {
				C string `json:"vrender_checkpoint"`
			}
			if err := json.Unmarshal(res.StreamState, &st); err != nil {
				return err
			}
			state, _ = json.Marshal(map[string]string{"vrender_checkpoint": st.C})
		}
	}
	return nil
}

// derenderPath is the chat derender route the in-process clients call.
const derenderPath = "/v1/chat/completions/derender"

// serverClock sums the process CPU time spent inside ServeHTTP calls, so
// an in-process HTTP figure is the server's work alone. (Garbage the
// client made may still be collected inside a timed call; the client
// allocates little, its buffers being reused.)
type serverClock struct{ cpu time.Duration }

// post serves one request and returns the reply; only ServeHTTP is timed.
func (c *serverClock) post(h http.Handler, path string, body []byte) ([]byte, error) {
	req := httptest.NewRequest("POST", path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	t0 := cpuTime()
	h.ServeHTTP(rec, req)
	c.cpu += cpuTime() - t0
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("status %d: %s", rec.Code, rec.Body.String())
	}
	return rec.Body.Bytes(), nil
}

// repeatServer is repeat for the in-process endpoint: f runs at least once
// and until its timed calls used minTime of CPU; it returns their CPU per
// run of f.
func repeatServer(ctx context.Context, minTime time.Duration, f func(*serverClock) error) (time.Duration, error) {
	runtime.GC()
	var clk serverClock
	for runs := 1; ; runs++ {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if err := f(&clk); err != nil {
			return 0, err
		}
		if clk.cpu >= minTime {
			return clk.cpu / time.Duration(runs), nil
		}
	}
}

// bestOfServer is bestOf for the in-process endpoint: the fastest of
// interleaveRounds rounds of repeatServer.
func bestOfServer(ctx context.Context, minTime time.Duration, f func(*serverClock) error) (time.Duration, error) {
	var best time.Duration
	for r := range interleaveRounds {
		d, err := repeatServer(ctx, minTime/interleaveRounds, f)
		if err != nil {
			return 0, err
		}
		if r == 0 || d < best {
			best = d
		}
	}
	return best, nil
}

// WriteTable prints the report.
func (r *DerenderReport) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "derender: %s, parsers %s; %s; one-token chunks\n", r.Model, r.Parsers, r.Clock)
	fmt.Fprintf(&b, "%-7s %9s %9s %7s %9s %7s %9s %9s %9s | %9s %9s %9s %9s | %7s %7s %7s %6s\n",
		"tokens", "batch", "session", "ratio", "stream", "ratio", "history", "ckpt", "ckpt-cold",
		"http-bat", "http-echo", "http-hist", "http-ckpt", "body-e", "body-h", "body-c", "equal")
	for _, x := range r.Results {
		fmt.Fprintf(&b, "%-7d %9.0f %9.0f %6.2fx %9.0f %6.2fx %9.0f %9.0f %9.0f | %9.0f %9.0f %9.0f %9.0f | %7d %7d %7d %6v\n",
			x.Tokens, x.BatchNsPerToken, x.SessionNsPerToken, x.SessionRatio, x.StreamNsPerToken, x.StreamRatio,
			x.HistoryNsPerToken, x.CheckpointNsPerToken,
			x.CheckpointColdNsPerToken, x.HTTPBatchNsPerToken, x.HTTPEchoNsPerCall, x.HTTPHistoryNsPerCall,
			x.HTTPCheckpointNsPerCall, x.EchoMaxBodyBytes, x.HistoryMaxBodyBytes, x.CheckpointMaxBodyBytes, x.StreamEqualsBatch)
	}
	b.WriteString("(ns per output token, CPU; session: in-process ChatSession.Push; stream: stream_state protocol, state echoed;\n" +
		" http-* stream columns are ns per call = per token; body-* the largest request body, bytes)\n")
	if len(r.Results) > 1 {
		first, last := r.Results[0].Tokens, r.Results[len(r.Results)-1].Tokens
		fmt.Fprintf(&b, "per-token cost %d vs %d tokens: session %.2fx, API stream %.2fx, HTTP echo %.2fx, HTTP checkpoint-only %.2fx (target <= %.1fx); session/batch target <= %.1fx\n",
			last, first, r.ScaleSession, r.ScaleAPI, r.ScaleHTTPEcho, r.ScaleHTTPCheckpoint, TargetScaleRatio, TargetStreamRatio)
	}
	if st := r.Stop; st != nil {
		fmt.Fprintf(&b, "stop strings (%d x %d chars, never matching), %d tokens: %.0f vs %.0f ns/token without, %.2fx (target <= %.1fx); automaton setup %.1f ms per request; same output %v\n",
			StopBenchStrings, StopBenchChars, st.Tokens, st.StopNsPerTok, st.NoStopNsPerTok, st.Ratio, TargetStopRatio, st.SetupNsPerReq/1e6, st.SameOutputBytes)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if r.HTTP != nil {
		if _, err := io.WriteString(w, "\nin-process figures above (http-*: httptest in process, only ServeHTTP timed); "); err != nil {
			return err
		}
		if err := r.HTTP.WriteTable(w); err != nil {
			return err
		}
	}
	return r.writeFamilies(w)
}
