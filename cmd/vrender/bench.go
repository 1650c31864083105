package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vrender/vrender/bench"
)

// runBench is the `vrender bench KIND ...` subcommand.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: vrender bench tokenize|render|derender --model DIR [flags] | vrender bench serve --model NAME [flags]")
		return errors.New("bench: missing kind (tokenize, render, derender, serve)")
	}
	switch args[0] {
	case "tokenize":
		return runBenchTokenize(ctx, args[1:], stdout, stderr)
	case "render":
		return runBenchRender(ctx, args[1:], stdout, stderr)
	case "derender":
		return runBenchDerender(ctx, args[1:], stdout, stderr)
	case "serve":
		return runBenchServe(ctx, args[1:], stdout, stderr)
	default:
		return fmt.Errorf("bench: unknown kind %q (known: tokenize, render, derender, serve)", args[0])
	}
}

// fileList is a repeatable --file flag.
type fileList []string

func (f *fileList) String() string     { return strings.Join(*f, ",") }
func (f *fileList) Set(v string) error { *f = append(*f, v); return nil }

// runBenchTokenize compares vrender's tokenizer with the reference binding.
func runBenchTokenize(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("vrender bench tokenize", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var files fileList
	model := fs.String("model", "", "model directory holding tokenizer.json (required)")
	fs.Var(&files, "file", "input file (repeatable); default: the generated ~9,000-token chat prompt and 1 MB of mixed text")
	refDir := fs.String("ref-dir", ".cache/ref", "folder whose node_modules holds the reference tokenizers binding")
	refScript := fs.String("ref-script", "", "path of tools/reftok/bench.js (default: found above the working directory)")
	node := fs.String("node", "node", "node binary")
	iterations := fs.Int("iterations", 5, "timed runs per input and operation")
	warmup := fs.Int("warmup", 1, "untimed runs before the timed ones")
	jsonOut := fs.String("json", "", "also write the report as JSON to this file")
	var hf httpBenchFlags
	hf.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: vrender bench tokenize --model DIR [--file F ...] [--ref-dir .cache/ref] [--iterations N] [--http] [--json out.json]")
		fmt.Fprintln(stderr, "Measures encode and decode throughput of vrender and of the HF reference binding on one core, same inputs, same run.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench tokenize: unexpected arguments %q", fs.Args())
	}
	if *model == "" {
		fs.Usage()
		return errors.New("bench tokenize: --model is required")
	}

	script := *refScript
	if script == "" {
		var err error
		if script, err = bench.FindScript("."); err != nil {
			return err
		}
	}
	nodeModules := filepath.Join(*refDir, "node_modules")
	if _, err := os.Stat(filepath.Join(nodeModules, "tokenizers")); err != nil {
		return fmt.Errorf("bench tokenize: reference binding not found under %s (run `make models`): %w", nodeModules, err)
	}

	var inputs []bench.Input
	for _, f := range files {
		inputs = append(inputs, bench.Input{Name: filepath.Base(f), Path: f})
	}
	if len(inputs) == 0 {
		dir, err := os.MkdirTemp("", "vrender-bench-")
		if err != nil {
			return fmt.Errorf("bench tokenize: %w", err)
		}
		defer os.RemoveAll(dir)
		if inputs, err = bench.WriteStandardInputs(dir); err != nil {
			return err
		}
	}

	httpOpts, err := hf.options(*model)
	if err != nil {
		return err
	}
	report, runErr := bench.Tokenize(ctx, bench.TokenizeOptions{
		HTTP:       httpOpts,
		ModelDir:   *model,
		Files:      inputs,
		Iterations: *iterations,
		Warmup:     *warmup,
		Reference:  bench.Reference{Node: *node, NodeModules: nodeModules, Script: script},
	})
	if report == nil {
		return runErr
	}
	if err := report.WriteTable(stdout); err != nil {
		return fmt.Errorf("bench tokenize: write table: %w", err)
	}
	if *jsonOut != "" {
		data, err := json.MarshalIndent(report, "", "  ")
		if err != nil {
			return fmt.Errorf("bench tokenize: %w", err)
		}
		if err := os.WriteFile(*jsonOut, append(data, '\n'), 0o644); err != nil {
			return fmt.Errorf("bench tokenize: write %s: %w", *jsonOut, err)
		}
	}
	return runErr
}

// runBenchRender compares vrender's chat rendering (template + tokenize)
// with the Python reference (Jinja2 + the HF binding).
func runBenchRender(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("vrender bench render", flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("model", "", "model directory holding tokenizer.json, tokenizer_config.json and its chat template (required)")
	refDir := fs.String("ref-dir", ".cache/ref", "folder whose node_modules holds the reference tokenizers binding")
	refScript := fs.String("ref-script", "", "path of tools/reftok/bench.js (default: found above the working directory)")
	renderScript := fs.String("render-script", "", "path of tools/refrender/bench.py (default: found above the working directory)")
	node := fs.String("node", "node", "node binary")
	python := fs.String("python", "python3", "python3 binary with Jinja2")
	iterations := fs.Int("iterations", 20, "timed renders per request and side")
	warmup := fs.Int("warmup", 3, "untimed renders before the timed ones")
	minTime := fs.Duration("min-time", time.Second, "vrender repeats its timed renders until they last at least this long")
	jsonOut := fs.String("json", "", "also write the report as JSON to this file")
	var hf httpBenchFlags
	hf.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: vrender bench render --model DIR [--iterations N] [--min-time 1s] [--ref-dir .cache/ref] [--http] [--json out.json]")
		fmt.Fprintln(stderr, "Measures chat rendering (template + tokenize) of a ~1,000- and a ~9,000-token conversation with tools")
		fmt.Fprintln(stderr, "on one core: vrender against the Python reference (vLLM message handling + Jinja2, then the HF binding),")
		fmt.Fprintln(stderr, "same requests, same run, the reference timed inside its processes. Fails if prompts or ids differ.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench render: unexpected arguments %q", fs.Args())
	}
	if *model == "" {
		fs.Usage()
		return errors.New("bench render: --model is required")
	}

	tokScript, pyScript := *refScript, *renderScript
	var err error
	if tokScript == "" {
		if tokScript, err = bench.FindScript("."); err != nil {
			return err
		}
	}
	if pyScript == "" {
		if pyScript, err = bench.FindRenderScript("."); err != nil {
			return err
		}
	}
	nodeModules := filepath.Join(*refDir, "node_modules")
	if _, err := os.Stat(filepath.Join(nodeModules, "tokenizers")); err != nil {
		return fmt.Errorf("bench render: reference binding not found under %s (run `make models`): %w", nodeModules, err)
	}

	// The requests offer tools with tool_choice "auto", which vLLM serves
	// only with a tool parser.
	httpOpts, err := hf.options(*model, "--enable-auto-tool-choice", "--tool-call-parser", "hermes")
	if err != nil {
		return err
	}
	report, runErr := bench.Render(ctx, bench.RenderOptions{
		HTTP:       httpOpts,
		ModelDir:   *model,
		Iterations: *iterations,
		Warmup:     *warmup,
		MinTime:    *minTime,
		Renderer:   bench.RenderReference{Python: *python, Script: pyScript},
		Tokenizer:  bench.Reference{Node: *node, NodeModules: nodeModules, Script: tokScript},
	})
	if report == nil {
		return runErr
	}
	if err := report.WriteTable(stdout); err != nil {
		return fmt.Errorf("bench render: write table: %w", err)
	}
	if *jsonOut != "" {
		data, err := json.MarshalIndent(report, "", "  ")
		if err != nil {
			return fmt.Errorf("bench render: %w", err)
		}
		if err := os.WriteFile(*jsonOut, append(data, '\n'), 0o644); err != nil {
			return fmt.Errorf("bench render: write %s: %w", *jsonOut, err)
		}
	}
	return runErr
}
