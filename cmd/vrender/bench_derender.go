package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/vrender/vrender/bench"
)

// runBenchDerender measures one-token streaming derender against batch.
func runBenchDerender(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("vrender bench derender", flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("model", "", "Qwen3-family model directory holding tokenizer.json (required)")
	sizes := fs.String("sizes", "1024,4096,16384", "comma-separated output lengths in tokens")
	minTime := fs.Duration("min-time", time.Second, "repeat each measurement until it used this much CPU (batch, session, stream_state and the echoing HTTP clients: over 15 rounds, the fastest kept; ratios are medians of back-to-back rounds)")
	noHTTP := fs.Bool("no-http", false, "skip the HTTP endpoint measurements")
	historyMax := fs.Int("http-history-max", 4096, "skip the HTTP history-only client (O(n²) per stream) above this many tokens; 0: never")
	jsonOut := fs.String("json", "", "also write the report as JSON to this file")
	var hf httpBenchFlags
	hf.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: vrender bench derender --model DIR [--sizes 1024,4096,16384] [--min-time 1s] [--no-http] [--http] [--json out.json]")
		fmt.Fprintln(stderr, "Streams outputs (reasoning + a hermes tool call with a long argument) one token per call through an in-process")
		fmt.Fprintln(stderr, "ChatSession (the orchestrator's path), the stream_state protocol of the derender package API and the HTTP endpoint")
		fmt.Fprintln(stderr, "(in process), against batch derender of the same output, on one core.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench derender: unexpected arguments %q", fs.Args())
	}
	if *model == "" {
		fs.Usage()
		return errors.New("bench derender: --model is required")
	}
	var ns []int
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return fmt.Errorf("bench derender: bad --sizes entry %q", f)
		}
		ns = append(ns, n)
	}
	httpOpts, err := hf.options(*model, "--reasoning-parser", "qwen3", "--tool-call-parser", "hermes", "--enable-auto-tool-choice")
	if err != nil {
		return err
	}
	report, err := bench.Derender(ctx, bench.DerenderOptions{ModelDir: *model, Sizes: ns, MinTime: *minTime, HTTP: !*noHTTP,
		HTTPHistoryMax: *historyMax, HTTPServe: httpOpts})
	if report == nil {
		return err
	}
	if err := report.WriteTable(stdout); err != nil {
		return fmt.Errorf("bench derender: write table: %w", err)
	}
	if *jsonOut != "" {
		data, err := json.MarshalIndent(report, "", "  ")
		if err != nil {
			return fmt.Errorf("bench derender: %w", err)
		}
		if err := os.WriteFile(*jsonOut, append(data, '\n'), 0o644); err != nil {
			return fmt.Errorf("bench derender: write %s: %w", *jsonOut, err)
		}
	}
	return err
}
