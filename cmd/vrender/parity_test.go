package main

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/parity"
	"github.com/vrender/vrender/internal/testenv"
	vparity "github.com/vrender/vrender/parity"
	"github.com/vrender/vrender/parity/standin"
)

// parityArgs is the command line for a golden file's server flags.
func parityArgs(t *testing.T, c parity.Case, url, requests, report string) []string {
	t.Helper()
	args := []string{"parity", "--vllm", url, "--model", parity.ModelDir(t, c.Tokenizer),
		"--requests", requests, "--report", report, "--concurrency", "2"}
	if c.Tokenizer == "llama3_1" {
		args = append(args, "--max-model-len", "131072")
	}
	reasoning, tool := c.Parsers()
	if reasoning != "" {
		args = append(args, "--reasoning-parser", reasoning)
	}
	if tool != "" {
		args = append(args, "--tool-call-parser", tool)
	}
	if c.EnableAutoToolChoice {
		args = append(args, "--enable-auto-tool-choice")
	}
	return args
}

// standInFor serves a golden file's cases, after corrupt changed them.
func standInFor(t *testing.T, path string, opts standin.Options, corrupt func([]standin.Case)) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cases, err := standin.Load(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if corrupt != nil {
		corrupt(cases)
	}
	srv := httptest.NewServer(standin.New(cases, opts))
	t.Cleanup(srv.Close)
	return srv.URL
}

func readParityReport(t *testing.T, path string) *vparity.Report {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep vparity.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	return &rep
}

// TestParityGolden runs `vrender parity` against a stand-in vLLM built
// from every golden file (API key from VLLM_API_KEY) and expects exit 0
// and a clean report on every check.
func TestParityGolden(t *testing.T) {
	names, sets := parity.Load(t)
	dir := filepath.Join(testenv.SharedDir(t), "parity")
	t.Setenv("VLLM_API_KEY", "sekret")
	for _, name := range names {
		t.Run(strings.TrimSuffix(name, ".jsonl"), func(t *testing.T) {
			path := filepath.Join(dir, name)
			url := standInFor(t, path, standin.Options{APIKey: "sekret"}, nil)
			report := filepath.Join(t.TempDir(), "report.json")
			code, stdout, stderr := runCLI(t, "", parityArgs(t, sets[name][0], url, path, report)...)
			if code != exitOK || !strings.Contains(stdout, "PASS: no unexplained difference") {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			rep := readParityReport(t, report)
			if len(rep.Cases) != len(sets[name]) {
				t.Errorf("report has %d cases, want %d", len(rep.Cases), len(sets[name]))
			}
			for _, s := range rep.Summary {
				if s.Fail != 0 || s.Skipped != 0 || s.Pass+s.Known != len(sets[name]) {
					t.Errorf("%s: %+v", s.Check, s)
				}
			}
		})
	}
}

// TestParityCatchesWrongAnswer: a stand-in whose answers were tampered
// with (one prompt id, one tool argument) makes the command exit 1 and
// report the first difference of each.
func TestParityCatchesWrongAnswer(t *testing.T) {
	_, sets := parity.Load(t)
	const name = "qwen3_hermes.jsonl"
	path := filepath.Join(testenv.SharedDir(t), "parity", name)
	var promptCase, argsCase string
	url := standInFor(t, path, standin.Options{}, func(cases []standin.Case) {
		for i := range cases {
			c := &cases[i]
			if promptCase == "" && len(c.PromptTokenIDs) > 5 {
				promptCase = c.ID
				c.PromptTokenIDs[len(c.PromptTokenIDs)-2]++
			}
			if argsCase == "" && len(c.Expect.ToolCalls) > 0 && strings.Contains(c.Expect.ToolCalls[0].Arguments, "Paris") {
				argsCase = c.ID
				c.Expect.ToolCalls[0].Arguments = strings.Replace(c.Expect.ToolCalls[0].Arguments, "Paris", "Lyon", 1)
			}
		}
	})
	if promptCase == "" || argsCase == "" {
		t.Fatal("no case to tamper with")
	}
	report := filepath.Join(t.TempDir(), "report.json")
	code, stdout, stderr := runCLI(t, "", parityArgs(t, sets[name][0], url, path, report)...)
	if code != exitError {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"render /tokenize | " + promptCase + " (line 1): token_ids: first difference at position 7 ",
		"parser batch | " + argsCase,
		`tool_calls[0].arguments: differ as JSON: first difference at character`,
		`vLLM "{\"city\": \"Lyon\"`,
		"FAIL: 4 unexplained difference(s)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "vrender parity: 4 unexplained difference(s)") {
		t.Errorf("stderr: %s", stderr)
	}
	rep := readParityReport(t, report)
	var failed []string
	for _, c := range rep.Cases {
		for _, r := range c.Results {
			if r.Status == vparity.Fail {
				failed = append(failed, c.Name+"/"+r.Check)
				if len(r.Differences) == 0 {
					t.Errorf("%s %s: failure without differences", c.Name, r.Check)
				}
			}
		}
	}
	want := []string{promptCase + "/" + vparity.CheckTokenize, promptCase + "/" + vparity.CheckRender,
		argsCase + "/" + vparity.CheckParserBatch, argsCase + "/" + vparity.CheckParserStrm}
	if strings.Join(failed, ",") != strings.Join(want, ",") {
		t.Errorf("failed checks %v, want %v", failed, want)
	}
}

// TestParityRenderServer is `vllm launch render`: the parser checks are
// skipped with a note, the render checks still run, exit 0.
func TestParityRenderServer(t *testing.T) {
	_, sets := parity.Load(t)
	const name = "qwen3_hermes.jsonl"
	path := filepath.Join(testenv.SharedDir(t), "parity", name)
	url := standInFor(t, path, standin.Options{RenderOnly: true, APIKey: "k"}, nil)
	report := filepath.Join(t.TempDir(), "report.json")
	args := append(parityArgs(t, sets[name][0], url, path, report), "--api-key", "k", "--served-model-name", "standin")
	code, stdout, stderr := runCLI(t, "", args...)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "`vllm launch render`") {
		t.Errorf("no note on the skipped parser checks:\n%s", stdout)
	}
	for _, s := range readParityReport(t, report).Summary {
		render := s.Check == vparity.CheckTokenize || s.Check == vparity.CheckRender
		if render && s.Pass != len(sets[name]) || !render && s.Skipped != len(sets[name]) {
			t.Errorf("%s: %+v", s.Check, s)
		}
	}
}

func TestParityUsage(t *testing.T) {
	qwen := testenv.ModelDir(t, "qwen3")
	reqs := filepath.Join(t.TempDir(), "r.jsonl")
	if err := os.WriteFile(reqs, []byte(`{"messages":[{"role":"user","content":"hi"}]}`+"\n"+"not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no server", []string{"--model", qwen, "--requests", reqs}, exitUsage, "--vllm URL"},
		{"bad url", []string{"--vllm", "localhost:8000", "--model", qwen, "--requests", reqs}, exitUsage, "must be an http(s) URL"},
		{"no requests", []string{"--vllm", "http://x", "--model", qwen}, exitUsage, "--requests FILE.jsonl"},
		{"missing file", []string{"--vllm", "http://x", "--model", qwen, "--requests", "/nonexistent.jsonl"}, exitUsage, "no such file"},
		{"bad line", []string{"--vllm", "http://x", "--model", qwen, "--requests", reqs}, exitUsage, "line 2: not a JSON object"},
		{"bad parser", []string{"--vllm", "http://x", "--model", qwen, "--requests", reqs, "--reasoning-parser", "nope"}, exitUsage, "invalid reasoning parser"},
		{"bad concurrency", []string{"--vllm", "http://x", "--model", qwen, "--requests", reqs, "--concurrency", "0"}, exitUsage, "--concurrency"},
		{"help", []string{"--help"}, exitOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, "", append([]string{"parity"}, tt.args...)...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, want %d; stderr %q lacks %q", code, tt.code, stderr, tt.stderr)
			}
		})
	}
}
