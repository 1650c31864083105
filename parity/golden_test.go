package parity_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/internal/parity"
	"github.com/vrender/vrender/model"
	vparity "github.com/vrender/vrender/parity"
	"github.com/vrender/vrender/parity/standin"
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/render"
)

// goldenSetup is vrender built as `vrender serve` would be for a golden
// file's server flags.
func goldenSetup(t *testing.T, c parity.Case) vparity.Config {
	t.Helper()
	dir := parity.ModelDir(t, c.Tokenizer)
	opts := model.Options{}
	if c.Tokenizer == "llama3_1" {
		opts.MaxModelLen = parity.Llama31MaxModelLen
	}
	m, err := model.Load(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	reasoning, tool := c.Parsers()
	r, err := render.New(m, render.Config{ContentFormat: render.FormatAuto})
	if err != nil {
		t.Fatal(err)
	}
	d, err := render.LoadSamplingDefaults(m, render.GenerationConfigAuto, nil)
	if err != nil {
		t.Fatal(err)
	}
	gen := render.NewGenerator(r, m.MaxModelLen, render.GeneratorConfig{
		EnableAutoToolChoice: c.EnableAutoToolChoice, ToolCallParser: tool, Defaults: d})
	der, err := derender.New(m, derender.Config{MaxLogprobs: 20, Parsers: parsers.Config{
		ReasoningParser: reasoning, ToolParser: tool, EnableAutoToolChoice: c.EnableAutoToolChoice}})
	if err != nil {
		t.Fatal(err)
	}
	return vparity.Config{Model: m, Generator: gen, Derender: der, Concurrency: 2}
}

// goldenFile reads one golden file as requests and as stand-in cases.
func goldenFile(t *testing.T, name string) ([]vparity.Request, []standin.Case) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(filepath.Dir(parity.ModelDir(t, "llama3_1")), "..", name))
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := vparity.ReadRequests(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	cases, err := standin.Load(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return reqs, cases
}

// standInRun serves cases with a stand-in and runs parity against it.
func standInRun(t *testing.T, cfg vparity.Config, reqs []vparity.Request, cases []standin.Case, opts standin.Options) (*vparity.Report, string) {
	t.Helper()
	srv := httptest.NewServer(standin.New(cases, opts))
	defer srv.Close()
	cfg.Client = &vparity.Client{BaseURL: srv.URL, APIKey: opts.APIKey}
	rep, err := vparity.Run(t.Context(), cfg, reqs)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	return rep, text.String()
}

const hermesFile = "qwen3_hermes.jsonl"

// TestStandInClean runs one golden file through the stand-in vLLM (with an
// API key) and expects a clean report: every render identical, every
// parser answer equal to vLLM's non-streaming one or a documented known
// difference. cmd/vrender's test runs every golden file through the
// command.
func TestStandInClean(t *testing.T) {
	_, sets := parity.Load(t)
	cfg := goldenSetup(t, sets[hermesFile][0])
	reqs, cases := goldenFile(t, hermesFile)
	rep, text := standInRun(t, cfg, reqs, cases, standin.Options{APIKey: "secret"})
	if rep.Failures() > 0 {
		t.Fatalf("report has %d failures:\n%s", rep.Failures(), text)
	}
	for _, s := range rep.Summary {
		if s.Skipped > 0 {
			t.Errorf("%s: %d skipped\n%s", s.Check, s.Skipped, text)
		}
		if s.Pass+s.Known != len(reqs) {
			t.Errorf("%s: %d pass + %d known, want %d in all", s.Check, s.Pass, s.Known, len(reqs))
		}
	}
	if !strings.Contains(text, "PASS: no unexplained difference") {
		t.Errorf("no PASS verdict:\n%s", text)
	}
}

// TestStandInWrongAnswers changes one prompt id and one tool argument in
// the stand-in's answers: both are caught, with the first difference.
func TestStandInWrongAnswers(t *testing.T) {
	_, sets := parity.Load(t)
	cfg := goldenSetup(t, sets[hermesFile][0])
	reqs, cases := goldenFile(t, hermesFile)
	var promptCase, argsCase string
	for i := range cases {
		c := &cases[i]
		if promptCase == "" && len(c.PromptTokenIDs) > 5 {
			promptCase = c.ID
			c.PromptTokenIDs = append([]int(nil), c.PromptTokenIDs...)
			c.PromptTokenIDs[3]++
		}
		if argsCase == "" && len(c.Expect.ToolCalls) == 1 && strings.Contains(c.Expect.ToolCalls[0].Arguments, "\"") {
			argsCase = c.ID
			c.Expect.ToolCalls = []standin.ToolCall{c.Expect.ToolCalls[0]}
			c.Expect.ToolCalls[0].Arguments = strings.Replace(c.Expect.ToolCalls[0].Arguments, "\"", "\"X", 1)
		}
	}
	if promptCase == "" || argsCase == "" {
		t.Fatal("golden file has no case to corrupt")
	}
	rep, text := standInRun(t, cfg, reqs, cases, standin.Options{})
	if rep.Failures() == 0 {
		t.Fatalf("wrong answers not caught:\n%s", text)
	}
	find := func(name, check string) *vparity.Result {
		for _, c := range rep.Cases {
			for i, r := range c.Results {
				if c.Name == name && r.Check == check {
					return &c.Results[i]
				}
			}
		}
		t.Fatalf("no %s result for %s", check, name)
		return nil
	}
	for _, check := range []string{vparity.CheckTokenize, vparity.CheckRender} {
		r := find(promptCase, check)
		if r.Status != vparity.Fail || !strings.Contains(r.First(), "token_ids: first difference at position 3 ") {
			t.Errorf("%s of %s: %s %q, want a failure at position 3", check, promptCase, r.Status, r.First())
		}
	}
	for _, check := range []string{vparity.CheckParserBatch, vparity.CheckParserStrm} {
		r := find(argsCase, check)
		if r.Status != vparity.Fail || !strings.HasPrefix(r.First(), "tool_calls[0].arguments: differ as JSON: first difference at character") {
			t.Errorf("%s of %s: %s %q, want an arguments failure", check, argsCase, r.Status, r.First())
		}
	}
	if got := rep.Failures(); got != 4 {
		t.Errorf("%d failures, want 4 (two render checks, two parser checks):\n%s", got, text)
	}
	t.Logf("\n%s", text)
	if !strings.Contains(text, "FAIL: 4 unexplained difference(s)") || !strings.Contains(text, promptCase) {
		t.Errorf("text report lacks the verdict or the case:\n%s", text)
	}
}

// TestStandInRenderOnly is `vllm launch render`: no /v1/chat/completions,
// so the parser checks are skipped with a note, and an older server
// without the render endpoint skips that check; nothing fails.
func TestStandInRenderOnly(t *testing.T) {
	_, sets := parity.Load(t)
	cfg := goldenSetup(t, sets[hermesFile][0])
	reqs, cases := goldenFile(t, hermesFile)
	reqs = reqs[:3]
	rep, text := standInRun(t, cfg, reqs, cases, standin.Options{RenderOnly: true, NoRenderEndpoint: true})
	if rep.Failures() > 0 {
		t.Fatalf("failures against a render-only server:\n%s", text)
	}
	want := map[string][2]int{ // pass, skipped
		vparity.CheckTokenize: {3, 0}, vparity.CheckRender: {0, 3},
		vparity.CheckParserBatch: {0, 3}, vparity.CheckParserStrm: {0, 3}, vparity.CheckVLLMStream: {0, 3},
	}
	for _, s := range rep.Summary {
		if w := want[s.Check]; s.Pass != w[0] || s.Skipped != w[1] {
			t.Errorf("%s: pass %d skipped %d, want %d and %d", s.Check, s.Pass, s.Skipped, w[0], w[1])
		}
	}
	if !strings.Contains(text, "no /v1/chat/completions") || !strings.Contains(text, "no /v1/chat/completions/render") {
		t.Errorf("no note on the missing routes:\n%s", text)
	}
}

// TestStandInBadKey: a wrong API key stops the run before any check.
func TestStandInBadKey(t *testing.T) {
	_, sets := parity.Load(t)
	cfg := goldenSetup(t, sets[hermesFile][0])
	reqs, cases := goldenFile(t, hermesFile)
	srv := httptest.NewServer(standin.New(cases, standin.Options{APIKey: "secret"}))
	defer srv.Close()
	cfg.Client = &vparity.Client{BaseURL: srv.URL, APIKey: "wrong"}
	_, err := vparity.Run(t.Context(), cfg, reqs)
	if err == nil || !strings.Contains(err.Error(), "HTTP 401: Unauthorized") {
		t.Fatalf("err = %v, want a 401", err)
	}
}
