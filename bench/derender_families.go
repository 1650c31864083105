package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/protocol"
)

// FamilyKinds are the workloads measured for every family: "prose" (a
// short reasoning and a long answer with no markup: the content path) and
// "calls" (several tool calls with long and typed arguments).
var FamilyKinds = []string{"prose", "calls"}

// FamilyResult is one family workload's figures, ns per output token of
// process CPU (GOMAXPROCS=1) as in DerenderResult.
type FamilyResult struct {
	Family    string `json:"family"`
	Kind      string `json:"kind"`
	Parsers   string `json:"parsers"`
	Tokenizer string `json:"tokenizer"`
	Source    string `json:"source"`
	Tokens    int    `json:"tokens"`
	Calls     int    `json:"calls"`
	// BatchNsPerToken is one Engine.Chat call; SessionNsPerToken the
	// output pushed one token at a time through a ChatSession;
	// StreamNsPerToken one-token stream_state calls through the package
	// API, the state echoed as returned. The ratios are medians of
	// back-to-back rounds.
	BatchNsPerToken   float64 `json:"batch_ns_per_token"`
	SessionNsPerToken float64 `json:"session_ns_per_token"`
	SessionRatio      float64 `json:"session_over_batch"`
	StreamNsPerToken  float64 `json:"stream_ns_per_token"`
	StreamRatio       float64 `json:"stream_over_batch"`
	// The endpoint in process (httptest, only ServeHTTP timed): the batch
	// call per token, and the checkpoint-echo client per call.
	HTTPBatchNsPerToken     float64 `json:"http_batch_ns_per_token,omitempty"`
	HTTPCheckpointNsPerCall float64 `json:"http_checkpoint_ns_per_call,omitempty"`
	// CheckpointMaxBodyBytes is the checkpoint client's largest request:
	// flat when the parser state a checkpoint carries does not grow.
	CheckpointMaxBodyBytes int `json:"checkpoint_max_body_bytes,omitempty"`
	// StreamEqualsBatch: the session and the stream both reached the batch
	// answer, which held the workload's calls (and content, for prose).
	StreamEqualsBatch bool `json:"stream_equals_batch"`
}

// FamilyHTTP is one family's over-HTTP table: a `vrender serve` child with
// the family's tokenizer and parsers, one-token checkpoint-echo calls.
type FamilyHTTP struct {
	Family string      `json:"family"`
	Report *HTTPReport `json:"report"`
}

// familyModels loads each family's tokenizer once; families whose markers
// the base vocabulary lacks get a copy of the base directory with them
// added as special tokens.
type familyModels struct {
	dir    string // the models folder
	tmp    string // where the extended copies go
	loaded map[string]*model.Model
	dirs   map[string]string
}

func (fm *familyModels) close() {
	if fm.tmp != "" {
		os.RemoveAll(fm.tmp)
	}
}

// get returns the family's model and its directory.
func (fm *familyModels) get(ctx context.Context, f *DerenderFamily) (*model.Model, string, error) {
	key := f.Model + "+" + strings.Join(f.Added, " ")
	if m, ok := fm.loaded[key]; ok {
		return m, fm.dirs[key], nil
	}
	dir := filepath.Join(fm.dir, f.Model)
	if len(f.Added) > 0 {
		if fm.tmp == "" {
			var err error
			if fm.tmp, err = os.MkdirTemp("", "vrender-bench-models-"); err != nil {
				return nil, "", err
			}
		}
		out := filepath.Join(fm.tmp, f.Name)
		if err := withAddedTokens(dir, out, f.Added); err != nil {
			return nil, "", fmt.Errorf("bench derender %s: %w", f.Name, err)
		}
		dir = out
	}
	m, err := model.Load(ctx, dir, model.Options{})
	if err != nil {
		return nil, "", fmt.Errorf("bench derender %s: %w", f.Name, err)
	}
	fm.loaded[key], fm.dirs[key] = m, dir
	return m, dir, nil
}

// withAddedTokens copies model directory src to dst with tokens appended
// to tokenizer.json's added_tokens as special tokens (ids after the last).
func withAddedTokens(src, dst string, tokens []string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if e.Name() == "tokenizer.json" {
			if data, err = addTokens(data, tokens); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func addTokens(tokenizerJSON []byte, tokens []string) ([]byte, error) {
	var tj map[string]json.RawMessage
	if err := json.Unmarshal(tokenizerJSON, &tj); err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	var added []map[string]any
	if err := json.Unmarshal(tj["added_tokens"], &added); err != nil {
		return nil, fmt.Errorf("tokenizer.json added_tokens: %w", err)
	}
	var mdl struct {
		Vocab map[string]int `json:"vocab"`
	}
	if err := json.Unmarshal(tj["model"], &mdl); err != nil {
		return nil, fmt.Errorf("tokenizer.json model: %w", err)
	}
	next := 0
	for _, id := range mdl.Vocab {
		next = max(next, id+1)
	}
	for _, a := range added {
		if id, ok := a["id"].(float64); ok {
			next = max(next, int(id)+1)
		}
	}
	for _, t := range tokens {
		added = append(added, map[string]any{"id": next, "content": t, "single_word": false, "lstrip": false,
			"rstrip": false, "normalized": false, "special": true})
		next++
	}
	raw, err := json.Marshal(added)
	if err != nil {
		return nil, err
	}
	tj["added_tokens"] = raw
	return json.Marshal(tj)
}

// familyOutput is about n tokens of the family's kind of output, and the
// calls it holds.
func familyOutput(m *model.Model, f *DerenderFamily, kind string, n int) ([]int, int) {
	encode := func(k int) ([]int, int) {
		text, calls := f.familyText(kind, k)
		return m.Tokenizer.Encode(text, false), calls
	}
	probe, _ := encode(400)
	per := float64(len(probe)) / 400
	return encode(max(int(float64(n)/per), 20))
}

// selectFamilies returns the families names picks (nil: all).
func selectFamilies(names []string) ([]*DerenderFamily, error) {
	var out []*DerenderFamily
	for i := range DerenderFamilies {
		f := &DerenderFamilies[i]
		if names == nil || slices.Contains(names, f.Name) {
			out = append(out, f)
		}
	}
	for _, n := range names {
		if !slices.ContainsFunc(out, func(f *DerenderFamily) bool { return f.Name == n }) {
			return nil, fmt.Errorf("bench derender: unknown family %q (known: %s)", n, strings.Join(FamilyNames(), ", "))
		}
	}
	return out, nil
}

// FamilyNames are the families' names, in table order.
func FamilyNames() []string {
	names := make([]string, len(DerenderFamilies))
	for i, f := range DerenderFamilies {
		names[i] = f.Name
	}
	return names
}

// parserLabel names a family's parser flags.
func parserLabel(f *DerenderFamily) string {
	if f.Parsers.ReasoningParser == "" {
		return f.Parsers.ToolParser
	}
	return f.Parsers.ReasoningParser + " + " + f.Parsers.ToolParser
}

// measureFamilies measures every selected family's workloads in process,
// and with serve set, each family over HTTP against its own child server.
func measureFamilies(ctx context.Context, opts DerenderOptions, report *DerenderReport) error {
	fams, err := selectFamilies(opts.Families)
	if err != nil {
		return err
	}
	fm := &familyModels{dir: opts.ModelsDir, loaded: map[string]*model.Model{}, dirs: map[string]string{}}
	defer fm.close()
	cr, err := protocol.DecodeChatCompletionRequest([]byte(familyChatRequest))
	if err != nil {
		return fmt.Errorf("bench derender: %w", err)
	}
	for _, f := range fams {
		m, dir, err := fm.get(ctx, f)
		if err != nil {
			return err
		}
		prompt := m.Tokenizer.Encode(f.Prompt, false)
		var workloads []Workload
		for _, kind := range FamilyKinds {
			ids, calls := familyOutput(m, f, kind, opts.FamilyTokens)
			r, err := measureFamily(ctx, m, f, cr, &apiClient{cr: cr, prompt: prompt, ids: ids}, kind, calls, opts.MinTime)
			if err != nil {
				return err
			}
			report.Families = append(report.Families, r)
			workloads = append(workloads, DerenderCallWorkload(f.Name+" "+kind, familyChatRequest, prompt, ids))
		}
		if opts.FamilyHTTPServe == nil {
			continue
		}
		serve := *opts.FamilyHTTPServe
		serve.Server.ModelDir = dir
		serve.Server.Args = append(familyServeArgs(f), serve.Server.Args...)
		rep, err := RunHTTP(ctx, serve, workloads)
		if rep != nil {
			for _, r := range report.Families {
				if r.Family == f.Name {
					rep.Compare(f.Name+" "+r.Kind, "checkpoint", r.HTTPCheckpointNsPerCall, 0, "")
				}
			}
			report.FamilyHTTP = append(report.FamilyHTTP, FamilyHTTP{Family: f.Name, Report: rep})
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// familyServeArgs are `vrender serve`'s parser flags for f.
func familyServeArgs(f *DerenderFamily) []string {
	var args []string
	if f.Parsers.ReasoningParser != "" {
		args = append(args, "--reasoning-parser", f.Parsers.ReasoningParser)
	}
	args = append(args, "--tool-call-parser", f.Parsers.ToolParser)
	if f.Parsers.EnableAutoToolChoice {
		args = append(args, "--enable-auto-tool-choice")
	}
	return args
}

// measureFamily measures one workload: batch, session and stream in
// back-to-back rounds, then the endpoint in process.
func measureFamily(ctx context.Context, m *model.Model, f *DerenderFamily, cr *protocol.ChatCompletionRequest, c *apiClient,
	kind string, calls int, minTime time.Duration) (FamilyResult, error) {
	r := FamilyResult{Family: f.Name, Kind: kind, Parsers: parserLabel(f), Tokenizer: f.Model, Source: f.Source,
		Tokens: len(c.ids), Calls: calls}
	if len(f.Added) > 0 {
		r.Tokenizer += " + " + strings.Join(f.Added, " ")
	}
	e, err := newBenchEngine(m, f.Parsers, 256)
	if err != nil {
		return r, err
	}
	if r.StreamEqualsBatch, err = verifyFamily(ctx, e, c, kind, calls, f.Think != nil); err != nil {
		return r, fmt.Errorf("bench derender %s %s: %w", f.Name, kind, err)
	}
	rounds, err := interleave(ctx, minTime,
		func() error { _, err := c.batch(ctx, e); return err },
		func() error { _, err := c.session(e, false); return err },
		func() error { _, err := c.stream(ctx, e, echoAll, false); return err })
	if err != nil {
		return r, err
	}
	perTok := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(len(c.ids)) }
	r.BatchNsPerToken = perTok(fastest(rounds, 0))
	r.SessionNsPerToken, r.SessionRatio = perTok(fastest(rounds, 1)), medianRatio(rounds, 1, 0)
	r.StreamNsPerToken, r.StreamRatio = perTok(fastest(rounds, 2)), medianRatio(rounds, 2, 0)

	h, err := newBenchHandler(m, f.Parsers)
	if err != nil {
		return r, err
	}
	d, err := repeatServer(ctx, minTime/2, func(clk *serverClock) error {
		_, err := clk.post(h, derenderPath, httpBatchBody(familyChatRequest, c.prompt, c.ids))
		return err
	})
	if err != nil {
		return r, err
	}
	r.HTTPBatchNsPerToken = perTok(d)
	var maxBody int
	if d, err = bestOfServer(ctx, minTime, func(clk *serverClock) error {
		return httpStream(clk, h, familyChatRequest, c.prompt, c.ids, echoCheckpoint, &maxBody)
	}); err != nil {
		return r, err
	}
	r.HTTPCheckpointNsPerCall, r.CheckpointMaxBodyBytes = perTok(d), maxBody
	return r, nil
}

// verifyFamily derenders the workload once in batch, as a stream and
// through a session: the batch answer must be the workload's
// (checkFamilyAnswer), and equal reports whether both others reached it.
func verifyFamily(ctx context.Context, e *derender.Engine, c *apiClient, kind string, calls int, thinks bool) (equal bool, err error) {
	batch, err := c.batch(ctx, e)
	if err != nil {
		return false, err
	}
	if err := checkFamilyAnswer(batch, kind, calls, thinks); err != nil {
		return false, err
	}
	stream, err := c.stream(ctx, e, echoAll, true)
	if err != nil {
		return false, err
	}
	session, err := c.session(e, true)
	if err != nil {
		return false, err
	}
	return sameAnswer(stream, batch) && sameAnswer(session, batch), nil
}

// checkFamilyAnswer checks the batch answer is the workload's: its calls
// with JSON-object arguments, and for prose a long answer and no calls,
// so a format the parser did not recognise fails the bench instead of
// measuring plain text; thinks: the output opens with reasoning.
func checkFamilyAnswer(res *protocol.ChatCompletionResponse, kind string, calls int, thinks bool) error {
	if len(res.Choices) != 1 {
		return fmt.Errorf("%d choices", len(res.Choices))
	}
	msg := res.Choices[0].Message
	if len(msg.ToolCalls) != calls {
		return fmt.Errorf("%d tool calls, want %d (content %.200q)", len(msg.ToolCalls), calls, deref(msg.Content))
	}
	for i, tc := range msg.ToolCalls {
		var args map[string]any
		if err := json.Unmarshal([]byte(tc.Function.Arguments), &args); err != nil {
			return fmt.Errorf("call %d (%s): arguments are not a JSON object: %v: %.200q", i, tc.Function.Name, err, tc.Function.Arguments)
		}
	}
	content, reasoning := deref(msg.Content), deref(msg.Reasoning)
	if thinks && reasoning == "" {
		return fmt.Errorf("no reasoning (content %.200q)", content)
	}
	if kind == "prose" && len(content) < 5*len(reasoning) || strings.Contains(content, "</") || strings.Contains(content, "<|") {
		return fmt.Errorf("the answer is not the prose written: content %.200q, reasoning %.200q", content, reasoning)
	}
	return nil
}

// writeFamilies prints the family tables.
func (r *DerenderReport) writeFamilies(w io.Writer) error {
	if len(r.Families) == 0 {
		return nil
	}
	ew := &errWriter{w: w}
	ew.printf("\nparser families (one output each; ns per output token, CPU, GOMAXPROCS=1; http-*: the endpoint in process,\n")
	ew.printf("only ServeHTTP timed; prose: short reasoning + long answer without markup; calls: %d calls with long and typed arguments)\n", FamilyCallsPerOutput)
	ew.printf("%-12s %-6s %-28s %6s %5s %9s %9s %7s %9s %7s %9s %10s %7s %6s\n", "family", "kind", "parsers", "tokens", "calls",
		"batch", "session", "ratio", "stream", "ratio", "http-bat", "http-ckpt", "body-c", "equal")
	for _, x := range r.Families {
		ew.printf("%-12s %-6s %-28s %6d %5d %9.0f %9.0f %6.2fx %9.0f %6.2fx %9.0f %10.0f %7d %6v\n", x.Family, x.Kind, x.Parsers, x.Tokens, x.Calls,
			x.BatchNsPerToken, x.SessionNsPerToken, x.SessionRatio, x.StreamNsPerToken, x.StreamRatio, x.HTTPBatchNsPerToken,
			x.HTTPCheckpointNsPerCall, x.CheckpointMaxBodyBytes, x.StreamEqualsBatch)
	}
	ew.printf("(body-c: the checkpoint client's largest request body, bytes)\n")
	ew.printf("tokenizers: ")
	seen := map[string]bool{}
	for _, x := range r.Families {
		if !seen[x.Family] {
			seen[x.Family] = true
			ew.printf("%s %s (%s); ", x.Family, x.Tokenizer, x.Source)
		}
	}
	ew.printf("\n")
	if len(r.FamilyHTTP) > 0 {
		ew.printf("\nparser families over HTTP: a `vrender serve` child per family (its tokenizer and parser flags), GOMAXPROCS=1, %s;\n",
			pinLabel(r.FamilyHTTP[0].Report.ServerPinned, "0"))
		ew.printf("one-token calls echoing only the checkpoint; server CPU from /proc (never the client's); floor: GET /v1/models on the same child\n")
		ew.printf("%-12s %-6s %14s %9s %10s %12s %13s %14s %8s\n", "family", "kind", "server µs/call", "floor µs", "× floor",
			"allocs/call", "syscalls/req", "in-process µs", "HTTP+JSON")
		for _, fh := range r.FamilyHTTP {
			for _, row := range fh.Report.Rows {
				_, kind, _ := strings.Cut(row.Name, " ")
				ew.printf("%-12s %-6s %14.1f %9.1f %9.2fx %12.0f %13.1f %14.1f %7.0f%%\n", fh.Family, kind, row.CPUPerReqNs/1e3,
					fh.Report.Floor(1).CPUPerReqNs/1e3, row.FloorRatio, row.AllocsPerUnit, row.SyscallsPerReq, row.InProcessNs/1e3, row.OverheadPct)
			}
		}
	}
	return ew.err
}
