package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vrender/vrender/bench"
)

// benchUsage is `vrender bench`'s own help.
const benchUsage = "Usage: vrender bench KIND [options]\n\nKinds: tokenize, render, derender, serve, images. Run 'vrender bench KIND --help' for their options.\n"

// benchKinds are the `vrender bench` subcommands.
var benchKinds = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) error{
	"tokenize": runBenchTokenize,
	"render":   runBenchRender,
	"derender": runBenchDerender,
	"serve":    runBenchServe,
	"images":   runBenchImages,
}

// runBench is the `vrender bench KIND ...` subcommand.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, benchUsage)
		return usagef("missing kind (tokenize, render, derender, serve, images)")
	}
	if args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, benchUsage)
		return flag.ErrHelp
	}
	if args[0] == bench.SendFloorCommand {
		return runSendFloorServer(ctx, args[1:], stdout)
	}
	kind, ok := benchKinds[args[0]]
	if !ok {
		return usagef("unknown kind %q (known: tokenize, render, derender, serve, images)", args[0])
	}
	return kind(ctx, args[1:], stdout, stderr)
}

// fileList is a repeatable --file flag.
type fileList []string

func (f *fileList) String() string     { return strings.Join(*f, ",") }
func (f *fileList) Set(v string) error { *f = append(*f, v); return nil }

// parseBench parses a bench kind's flags: no positional arguments, and
// --model required.
func parseBench(c *command, args []string, model *string, stdout io.Writer) error {
	rest, err := c.parse(args, stdout)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q (the model goes in --model)", rest[0])
	}
	if *model == "" {
		return usagef("--model is required")
	}
	return nil
}

// finishBench prints a bench report's table and writes its JSON, then
// returns the run's own error: a run that failed after measuring (a target
// or an agreement check) still shows its figures. A nil report (nothing
// measured) returns the error alone.
func finishBench[T any, R interface {
	*T
	WriteTable(io.Writer) error
}](stdout io.Writer, report R, jsonPath string, runErr error) error {
	if report == nil {
		return runErr
	}
	if err := report.WriteTable(stdout); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	if err := writeReportJSON(jsonPath, report); err != nil {
		return err
	}
	return runErr
}

// writeReportJSON writes a bench report as indented JSON when path is set.
func writeReportJSON(path string, report any) error {
	if path == "" {
		return nil
	}
	data, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// runBenchTokenize compares vrender's tokenizer with the reference binding.
func runBenchTokenize(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommand("bench tokenize", "--model DIR [--file F ...] [--ref-dir .cache/ref] [--iterations N] [--http] [--json out.json]",
		"Measure encode and decode throughput of vrender and of the HF reference binding on one core, same inputs, same run.")
	fs := c.fs
	var files fileList
	model := fs.String("model", "", "model `DIR` holding tokenizer.json (required)")
	fs.Var(&files, "file", "input `FILE` (repeatable); default: the generated ~9,000-token chat prompt and 1 MB of mixed text")
	refDir := fs.String("ref-dir", ".cache/ref", "`DIR` whose node_modules holds the reference tokenizers binding")
	refScript := fs.String("ref-script", "", "path of tools/reftok/bench.js (default: found above the working directory)")
	node := fs.String("node", "node", "node binary")
	iterations := fs.Int("iterations", 5, "timed runs per input and operation")
	warmup := fs.Int("warmup", 1, "untimed runs before the timed ones")
	jsonOut := fs.String("json", "", "also write the report as JSON to this `FILE`")
	var hf httpBenchFlags
	hf.register(fs)
	if err := parseBench(c, args, model, stdout); err != nil {
		return err
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
		return fmt.Errorf("reference binding not found under %s (run `make models`): %w", nodeModules, err)
	}

	var inputs []bench.Input
	for _, f := range files {
		inputs = append(inputs, bench.Input{Name: filepath.Base(f), Path: f})
	}
	if len(inputs) == 0 {
		dir, err := os.MkdirTemp("", "vrender-bench-")
		if err != nil {
			return err
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
	return finishBench(stdout, report, *jsonOut, runErr)
}

// runBenchRender compares vrender's chat rendering (template + tokenize)
// with the Python reference (Jinja2 + the HF binding).
func runBenchRender(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommand("bench render", "--model DIR [--iterations N] [--min-time 1s] [--ref-dir .cache/ref] [--http] [--json out.json]",
		"Measure chat rendering (template + tokenize) of a ~1,000- and a ~9,000-token conversation with tools\n"+
			"on one core: vrender against the Python reference (vLLM message handling + Jinja2, then the HF binding),\n"+
			"same requests, same run, the reference timed inside its processes. Fails if prompts or ids differ.")
	fs := c.fs
	model := fs.String("model", "", "model `DIR` holding tokenizer.json, tokenizer_config.json and its chat template (required)")
	refDir := fs.String("ref-dir", ".cache/ref", "`DIR` whose node_modules holds the reference tokenizers binding")
	refScript := fs.String("ref-script", "", "path of tools/reftok/bench.js (default: found above the working directory)")
	renderScript := fs.String("render-script", "", "path of tools/refrender/bench.py (default: found above the working directory)")
	node := fs.String("node", "node", "node binary")
	python := fs.String("python", "python3", "python3 binary with Jinja2")
	iterations := fs.Int("iterations", 20, "timed renders per request and side")
	warmup := fs.Int("warmup", 3, "untimed renders before the timed ones")
	minTime := fs.Duration("min-time", time.Second, "vrender repeats its timed renders until they last at least this long")
	jsonOut := fs.String("json", "", "also write the report as JSON to this `FILE`")
	var hf httpBenchFlags
	hf.register(fs)
	if err := parseBench(c, args, model, stdout); err != nil {
		return err
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
		return fmt.Errorf("reference binding not found under %s (run `make models`): %w", nodeModules, err)
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
	return finishBench(stdout, report, *jsonOut, runErr)
}
