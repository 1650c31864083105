package main

import (
	"context"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/vrender/vrender/bench"
)

// runBenchDerender measures one-token streaming derender against batch.
func runBenchDerender(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommand("bench derender", "--model DIR [--sizes 1024,4096,16384] [--family-tokens 4096] [--families LIST] [--min-time 1s] [--no-http] [--http] [--json out.json]",
		"Stream outputs one token per call through an in-process ChatSession (the orchestrator's path), the stream_state\n"+
			"protocol of the derender package API and the HTTP endpoint (in process, only the handler timed), against batch\n"+
			"derender of the same output, on one core. First a qwen3 + hermes output (reasoning + one call with a long argument)\n"+
			"at each --sizes length, with history, checkpoint and stop-string clients; then every parser family's format\n"+
			"(hermes, qwen3_coder, llama3_json, pythonic, deepseek_v3, deepseek_v31, mistral, kimi_k2, glm45, minimax_m2,\n"+
			"openai) at --family-tokens, a prose-heavy output and one with several calls. With --http, a `vrender serve`\n"+
			"child per workload set measures the server process's CPU per call.")
	fs := c.fs
	model := fs.String("model", "", "Qwen3-family model `DIR` holding tokenizer.json (required)")
	modelsDir := fs.String("models-dir", "", "`DIR` holding the families' tokenizers (qwen3, llama3_1, deepseek_v3, gptoss) (default: --model's parent)")
	sizes := fs.String("sizes", "1024,4096,16384", "comma-separated output `LENGTHS` in tokens of the qwen3 + hermes output")
	familyTokens := fs.Int("family-tokens", 4096, "output length in `TOKENS` of each parser-family workload (0: skip the families)")
	families := fs.String("families", "", "comma-separated `FAMILIES` to measure (default: all: "+strings.Join(bench.FamilyNames(), ",")+")")
	minTime := fs.Duration("min-time", time.Second, "repeat each measurement until it used this much CPU (batch, session, stream_state and the echoing HTTP clients: over 15 rounds, the fastest kept; ratios are medians of back-to-back rounds)")
	noHTTP := fs.Bool("no-http", false, "skip the in-process HTTP endpoint measurements of the qwen3 + hermes output")
	historyMax := fs.Int("http-history-max", 4096, "skip the HTTP history-only client (O(n²) per stream) above this many `TOKENS`; 0: never")
	jsonOut := fs.String("json", "", "also write the report as JSON to this `FILE`")
	var hf httpBenchFlags
	hf.register(fs)
	if err := parseBench(c, args, model, stdout); err != nil {
		return err
	}
	var ns []int
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return usagef("bad --sizes entry %q", f)
		}
		ns = append(ns, n)
	}
	if *familyTokens < 0 {
		return usagef("--family-tokens must be 0 or positive, got %d", *familyTokens)
	}
	var picked []string
	if *families != "" {
		for _, f := range strings.Split(*families, ",") {
			picked = append(picked, strings.TrimSpace(f))
		}
	}
	if *modelsDir == "" {
		*modelsDir = filepath.Dir(filepath.Clean(*model))
	}
	httpOpts, err := hf.options(*model, "--reasoning-parser", "qwen3", "--tool-call-parser", "hermes", "--enable-auto-tool-choice")
	if err != nil {
		return err
	}
	familyHTTP, err := hf.options("") // each family's directory and parser flags are set per family
	if err != nil {
		return err
	}
	report, err := bench.Derender(ctx, bench.DerenderOptions{ModelDir: *model, Sizes: ns, MinTime: *minTime, HTTP: !*noHTTP,
		HTTPHistoryMax: *historyMax, HTTPServe: httpOpts, FamilyTokens: *familyTokens, ModelsDir: *modelsDir, Families: picked,
		FamilyHTTPServe: familyHTTP})
	return finishBench(stdout, report, *jsonOut, err)
}
