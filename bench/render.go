package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/vrender/vrender/internal/benchdata"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
)

// TargetRenderRatio is the render issue's target: template + tokenize at
// least this many times faster than the Python reference on one core.
const TargetRenderRatio = 20.0

// RenderOptions configures a render benchmark run.
type RenderOptions struct {
	ModelDir   string // model directory with tokenizer.json, tokenizer_config.json and a chat template
	Sizes      []benchdata.Size
	Iterations int // timed renders per request and side
	Warmup     int // untimed renders before them
	// MinTime extends the timed runs of each side (vrender, reference
	// template, reference tokenizer) to add up to at least this long: a
	// render takes milliseconds or less, so a few of them would measure the
	// machine's noise more than the renderer.
	MinTime   time.Duration
	Renderer  RenderReference
	Tokenizer Reference
	// HTTP, when set, also measures the requests over HTTP against a
	// `vrender serve` child process.
	HTTP *HTTPOptions
}

// RenderReport is the result of a run; it is also the --json output.
type RenderReport struct {
	Model         string         `json:"model"`
	GOMAXPROCS    int            `json:"gomaxprocs"`
	ReferencePin  string         `json:"reference_pinning"`
	Python        string         `json:"python"`
	Jinja2        string         `json:"jinja2"`
	RefFirstNs    int64          `json:"reference_first_render_ns"` // includes compiling the template
	RefTokLoadNs  int64          `json:"reference_tokenizer_load_ns"`
	ContentFormat string         `json:"content_format"`
	Requests      []RenderResult `json:"requests"`
	HTTP          *HTTPReport    `json:"http,omitempty"`
}

// RenderResult compares both implementations on one request.
type RenderResult struct {
	Name        string `json:"name"`
	Messages    int    `json:"messages"`
	PromptBytes int    `json:"prompt_bytes"`
	Tokens      int    `json:"tokens"`
	RefTokens   int    `json:"reference_tokens"`
	PromptEqual bool   `json:"prompt_equal"`
	// FirstDiffByte is the byte offset of the first difference of the
	// prompts, FirstDiff the token index of the first differing id.
	FirstDiffByte int  `json:"first_diff_byte,omitempty"`
	IDsEqual      bool `json:"ids_equal"`
	FirstDiff     int  `json:"first_diff,omitempty"`
	// Render is vrender's RenderChat: message handling, template and
	// tokenizing, from the raw request messages to token ids.
	Render Timing `json:"render"`
	// Tokenize is the tokenizing part of Render, timed on its own.
	Tokenize    Timing  `json:"tokenize"`
	RefTemplate Timing  `json:"reference_template"`
	RefTokenize Timing  `json:"reference_tokenize"`
	ReqPerSec   float64 `json:"requests_per_s"`
	// RefReqPerSec is one over the sum of the reference's two medians.
	RefReqPerSec    float64 `json:"reference_requests_per_s"`
	Ratio           float64 `json:"ratio"`     // median over median
	RatioMin        float64 `json:"ratio_min"` // fastest over fastest
	AllocsPerRender float64 `json:"allocs_per_render"`
	BytesPerRender  float64 `json:"bytes_per_render"`
}

// Render measures vrender's chat rendering (template + tokenize) against
// the Python reference (Jinja2 + the HF binding) on one core, same requests,
// same run. The reference is timed inside its own processes, so the ratio
// leaves out the pipe and JSON transport a Go-driven loop would add. It
// fails if the two disagree on any prompt or token, after measuring
// everything, so the report still shows the figures.
func Render(ctx context.Context, opts RenderOptions) (*RenderReport, error) {
	if opts.Iterations < 1 {
		return nil, fmt.Errorf("bench render: iterations must be at least 1")
	}
	if opts.Warmup < 0 {
		return nil, fmt.Errorf("bench render: warmup must not be negative")
	}
	sizes := opts.Sizes
	if len(sizes) == 0 {
		sizes = benchdata.Sizes
	}
	m, template, r, err := loadRenderModel(ctx, opts.ModelDir)
	if err != nil {
		return nil, err
	}

	dir, err := os.MkdirTemp("", "vrender-bench-render-")
	if err != nil {
		return nil, fmt.Errorf("bench render: %w", err)
	}
	defer os.RemoveAll(dir)

	requests := make([]benchdata.Request, len(sizes))
	reqFiles := make([]string, len(sizes))
	for i, s := range sizes {
		requests[i] = benchdata.Conversation(s)
		if reqFiles[i], err = writeRenderRequest(dir, s.Name, template, requests[i], specialTokens(m)); err != nil {
			return nil, err
		}
	}

	// The reference runs first, in its own processes, so its memory is
	// gone before vrender is measured: the renderer over the requests,
	// then the tokenizer over the prompts it rendered.
	py, err := opts.Renderer.run(ctx, reqFiles, opts.Iterations, opts.Warmup, opts.MinTime)
	if err != nil {
		return nil, err
	}
	promptFiles := make([]string, len(sizes))
	for i, s := range sizes {
		promptFiles[i] = filepath.Join(dir, s.Name+".prompt.txt")
		if err := os.WriteFile(promptFiles[i], []byte(py.Requests[i].Prompt), 0o644); err != nil {
			return nil, fmt.Errorf("bench render: write reference prompt: %w", err)
		}
	}
	tokenizerJSON := filepath.Join(m.TokenizerDir, "tokenizer.json")
	tok, pinned, err := opts.Tokenizer.run(ctx, tokenizerJSON, promptFiles, opts.Iterations, opts.Warmup)
	if err != nil {
		return nil, err
	}
	if err := extendTokenizerRuns(ctx, opts, tokenizerJSON, promptFiles, tok); err != nil {
		return nil, err
	}

	report := &RenderReport{Model: opts.ModelDir, GOMAXPROCS: 1, Python: py.Python, Jinja2: py.Jinja2,
		RefFirstNs: py.FirstRenderNs, RefTokLoadNs: tok.LoadNs,
		ReferencePin: "RAYON_NUM_THREADS=1 (taskset not found: not pinned)"}
	if pinned {
		report.ReferencePin = "taskset -c 0, RAYON_NUM_THREADS=1"
	}

	// One core for the Go side too: requests per second per core is the
	// target.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))

	var mismatch error
	for i, s := range sizes {
		res, format, err := measureRenderRequest(ctx, r, opts, s.Name, requests[i], py.Requests[i], tok.Files[i])
		if err != nil {
			return nil, err
		}
		report.ContentFormat = format
		if (!res.PromptEqual || !res.IDsEqual) && mismatch == nil {
			mismatch = fmt.Errorf("bench render: vrender and the reference disagree on %s (prompt equal: %v, first differing byte %d; ids equal: %v, first differing token %d)",
				s.Name, res.PromptEqual, res.FirstDiffByte, res.IDsEqual, res.FirstDiff)
		}
		report.Requests = append(report.Requests, res)
	}
	if opts.HTTP != nil {
		if err := renderHTTP(ctx, opts, r, tokenizerJSON, template, specialTokens(m), sizes, report, dir); err != nil {
			return report, err
		}
	}
	return report, mismatch
}

// loadRenderModel loads the model with its segment cache off and picks the
// chat template the benchmark's requests render with.
func loadRenderModel(ctx context.Context, dir string) (*model.Model, string, *render.Renderer, error) {
	m, err := model.Load(ctx, dir, model.Options{})
	if err != nil {
		return nil, "", nil, fmt.Errorf("bench render: %w", err)
	}
	// Every iteration renders the same request: this is the cold figure, so
	// the segment cache must not turn it into a warm one.
	m.Tokenizer.SetSegmentCacheSize(0)
	// The requests carry tools, so transformers would pick a "tool_use"
	// template over the default one.
	template, ok := m.ChatTemplates["tool_use"]
	if !ok {
		if template, ok = m.ChatTemplates["default"]; !ok {
			return nil, "", nil, fmt.Errorf("bench render: %s has no default chat template", dir)
		}
	}
	r, err := render.New(m, render.Config{})
	if err != nil {
		return nil, "", nil, fmt.Errorf("bench render: %w", err)
	}
	return m, template, r, nil
}

// measureRenderRequest renders one request as the reference did (from
// decoded dicts) and compares prompt and IDs with the reference's; it also
// returns the content format the template was detected to use.
func measureRenderRequest(ctx context.Context, r *render.Renderer, opts RenderOptions, name string, req benchdata.Request, py renderedByPython, tok referenceFile) (RenderResult, string, error) {
	msgs, err := protocol.ParseMessages(req.Messages)
	if err != nil {
		return RenderResult{}, "", fmt.Errorf("bench render %s: %w", name, err)
	}
	tools, err := decodeTools(req.Tools)
	if err != nil {
		return RenderResult{}, "", fmt.Errorf("bench render %s: %w", name, err)
	}
	in := render.ChatInput{Messages: msgs, Tools: tools,
		AddGenerationPrompt: req.AddGenerationPrompt}
	res, p, err := measureRender(ctx, r, in, opts.Iterations, opts.Warmup, opts.MinTime)
	if err != nil {
		return RenderResult{}, "", fmt.Errorf("bench render %s: %w", name, err)
	}
	res.Name, res.Messages = name, len(req.Messages)
	compareRender(&res, p, py, tok)
	return res, p.ContentFormat, nil
}

// measureRender times RenderChat and counts its allocations. Timing each
// call separately allocates nothing, so the MemStats delta over the timed
// loop is the renderer's own. It returns the prompt of the untimed first
// render for the comparison with the reference.
func measureRender(ctx context.Context, r *render.Renderer, in render.ChatInput, iterations, warmup int, minTime time.Duration) (RenderResult, *render.ChatPrompt, error) {
	var p *render.ChatPrompt
	var err error
	var last time.Duration
	for i := 0; i < warmup+1; i++ {
		start := time.Now()
		if p, err = r.RenderChat(ctx, in); err != nil {
			return RenderResult{}, nil, err
		}
		last = time.Since(start)
	}
	// Room for twice the runs the warm-up suggests, so appending never
	// allocates inside the measured loop.
	capacity := iterations
	if last > 0 && minTime > 0 {
		capacity = max(iterations, min(int(2*minTime/last), maxRenderIterations))
	}
	ns := make([]float64, 0, capacity)
	var total time.Duration
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for len(ns) < iterations || (total < minTime && len(ns) < capacity) {
		start := time.Now()
		_, err = r.RenderChat(ctx, in)
		d := time.Since(start)
		if err != nil {
			return RenderResult{}, nil, err
		}
		ns = append(ns, float64(d.Nanoseconds()))
		total += d
	}
	runtime.ReadMemStats(&after)
	// The tokenizer's share, for whoever optimizes: the same prompt
	// through TokenizePrompt alone.
	tokNs := make([]float64, 0, len(ns))
	tokStart := time.Now()
	for len(tokNs) < len(ns) || (time.Since(tokStart) < minTime && len(tokNs) < maxRenderIterations) {
		start := time.Now()
		_, err = r.TokenizePrompt(p.Text, in.AddSpecialTokens, nil, "")
		tokNs = append(tokNs, float64(time.Since(start).Nanoseconds()))
		if err != nil {
			return RenderResult{}, nil, err
		}
	}
	res := RenderResult{
		PromptBytes:     len(p.Text),
		Tokens:          len(p.TokenIDs),
		Render:          summarize(ns),
		Tokenize:        summarize(tokNs),
		AllocsPerRender: float64(after.Mallocs-before.Mallocs) / float64(len(ns)),
		BytesPerRender:  float64(after.TotalAlloc-before.TotalAlloc) / float64(len(ns)),
	}
	return res, p, nil
}

// extendTokenizerRuns times the reference tokenizer again on each prompt
// whose runs added up to less than MinTime, with enough runs to reach it,
// so both halves of the reference and vrender are timed over similar
// stretches of a possibly busy machine. bench.js takes one run count for
// all its files, hence one process per prompt that needs more.
func extendTokenizerRuns(ctx context.Context, opts RenderOptions, tokenizerJSON string, promptFiles []string, tok *referenceRun) error {
	for i, f := range promptFiles {
		enc := tok.Files[i].Encode
		if enc.MedianNs <= 0 || enc.MedianNs*float64(enc.Iterations) >= float64(opts.MinTime) {
			continue
		}
		n := min(int(float64(opts.MinTime)/enc.MedianNs)+1, maxRenderIterations)
		more, _, err := opts.Tokenizer.run(ctx, tokenizerJSON, []string{f}, n, opts.Warmup)
		if err != nil {
			return err
		}
		if !slices.Equal(more.Files[0].IDs, tok.Files[i].IDs) {
			return fmt.Errorf("bench render: the reference tokenizer gave different ids for the same prompt in two runs")
		}
		tok.Files[i].Encode = more.Files[0].Encode
	}
	return nil
}

// maxRenderIterations caps the runs MinTime asks for, should a measured
// run be implausibly fast.
const maxRenderIterations = 100_000

// compareRender fills in the reference's side of res: its timings, the
// ratios and whether prompt and ids agree.
func compareRender(res *RenderResult, p *render.ChatPrompt, py renderedByPython, tok referenceFile) {
	res.RefTokens = len(tok.IDs)
	res.RefTemplate, res.RefTokenize = py.Render, tok.Encode
	res.PromptEqual = p.Text == py.Prompt
	if !res.PromptEqual {
		res.FirstDiffByte = firstDiff([]byte(p.Text), []byte(py.Prompt))
	}
	res.IDsEqual = slices.Equal(p.TokenIDs, tok.IDs)
	if !res.IDsEqual {
		res.FirstDiff = firstDiff(p.TokenIDs, tok.IDs)
	}
	res.ReqPerSec = perSecond(res.Render.MedianNs)
	refMedian := py.Render.MedianNs + tok.Encode.MedianNs
	res.RefReqPerSec = perSecond(refMedian)
	if res.Render.MedianNs > 0 {
		res.Ratio = refMedian / res.Render.MedianNs
	}
	if res.Render.MinNs > 0 {
		res.RatioMin = (py.Render.MinNs + tok.Encode.MinNs) / res.Render.MinNs
	}
}

// firstDiff returns the index of the first element where a and b differ,
// or the shorter length when one is a prefix of the other.
func firstDiff[T comparable](a, b []T) int {
	i := 0
	for i < min(len(a), len(b)) && a[i] == b[i] {
		i++
	}
	return i
}

// perSecond converts a duration in ns to operations per second.
func perSecond(ns float64) float64 {
	if ns <= 0 {
		return 0
	}
	return 1e9 / ns
}

// specialTokens are the tokenizer's special tokens as transformers passes
// them to the template.
func specialTokens(m *model.Model) map[string]string {
	tc := m.TokenizerConfig
	out := map[string]string{}
	for k, v := range map[string]string{
		"bos_token": tc.BOSToken, "eos_token": tc.EOSToken, "unk_token": tc.UNKToken,
		"sep_token": tc.SEPToken, "pad_token": tc.PADToken, "cls_token": tc.CLSToken, "mask_token": tc.MaskToken,
	} {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// writeRenderRequest writes one request file for the reference renderer.
func writeRenderRequest(dir, name, template string, q benchdata.Request, specials map[string]string) (string, error) {
	body, err := json.Marshal(q)
	if err != nil {
		return "", fmt.Errorf("bench render: encode request: %w", err)
	}
	data, err := json.Marshal(renderRequest{Template: template, Request: body, SpecialTokens: specials, ContentFormat: "auto"})
	if err != nil {
		return "", fmt.Errorf("bench render: encode request: %w", err)
	}
	path := filepath.Join(dir, name+".request.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return "", fmt.Errorf("bench render: write request: %w", err)
	}
	return path, nil
}

// WriteTable prints the report as a human-readable table.
func (r *RenderReport) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("bench render %s — the model's chat template with tools, template + tokenize per request, one core (vrender GOMAXPROCS=1; reference %s)\n",
		r.Model, r.ReferencePin)
	ew.printf("reference: Python %s, Jinja2 %s, vLLM message handling (tools/refrender) + HF tokenizers binding, each timed inside its own process (no pipe or JSON transport);\n",
		r.Python, r.Jinja2)
	ew.printf("vrender: RenderChat from the raw JSON messages (parsing included) to token ids\n")
	ew.printf("req/s and ratio from median times, best/best from the fastest; runs: vrender/template/tokenize; content format %s\n\n",
		r.ContentFormat)
	ew.printf("%-7s %5s %8s %7s %17s %14s %12s %12s %14s %8s %10s %13s %13s %s\n", "request", "msgs", "bytes", "tokens",
		"runs", "vrender req/s", "ref tmpl ms", "ref tok ms", "ref req/s", "ratio", "best/best", "allocs/render", "bytes/render", "target")
	for _, q := range r.Requests {
		ew.printf("%-7s %5d %8d %7d %17s %14.1f %12.3f %12.3f %14.1f %7.1fx %9.1fx %13.0f %13s ≥%.0fx %s\n", q.Name, q.Messages,
			q.PromptBytes, q.Tokens, fmt.Sprintf("%d/%d/%d", q.Render.Iterations, q.RefTemplate.Iterations, q.RefTokenize.Iterations), q.ReqPerSec, q.RefTemplate.MedianNs/1e6, q.RefTokenize.MedianNs/1e6, q.RefReqPerSec,
			q.Ratio, q.RatioMin, q.AllocsPerRender, fmtKiB(q.BytesPerRender), TargetRenderRatio, verdict(q.Ratio >= TargetRenderRatio))
	}
	ew.printf("\n")
	for _, q := range r.Requests {
		if q.Render.MedianNs > 0 {
			ew.printf("%s: vrender %.3f ms per render, of which tokenizing %.3f ms (%.0f%%)\n", q.Name, q.Render.MedianNs/1e6,
				q.Tokenize.MedianNs/1e6, 100*q.Tokenize.MedianNs/q.Render.MedianNs)
		}
	}
	for _, q := range r.Requests {
		switch {
		case !q.PromptEqual:
			ew.printf("%s: PROMPT DIFFERS from the reference at byte %d\n", q.Name, q.FirstDiffByte)
		case !q.IDsEqual:
			ew.printf("%s: prompt identical, IDS DIFFER from the reference at token %d (vrender %d tokens, reference %d)\n",
				q.Name, q.FirstDiff, q.Tokens, q.RefTokens)
		default:
			ew.printf("%s: prompt text and token ids identical to the reference\n", q.Name)
		}
	}
	if ew.err == nil && r.HTTP != nil {
		ew.printf("\nin-process figures above; ")
		if err := r.HTTP.WriteTable(w); err != nil {
			return err
		}
	}
	return ew.err
}

func fmtKiB(b float64) string { return fmt.Sprintf("%.1f KiB", b/(1<<10)) }

// decodeTools decodes a benchmark request's tools as the server decodes a
// request's (nil for none).
func decodeTools(raws []json.RawMessage) ([]protocol.Tool, error) {
	if raws == nil {
		return nil, nil
	}
	list, err := json.Marshal(raws)
	if err != nil {
		return nil, err
	}
	return protocol.DecodeTools(list)
}
