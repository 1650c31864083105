package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// RenderReference locates the reference chat renderer (Python Jinja2 with
// vLLM's message handling, tools/refrender/chat.py) and the script that
// times it, tools/refrender/bench.py.
type RenderReference struct {
	Python string // python3 binary; "python3" on PATH when empty
	Script string // path of tools/refrender/bench.py
}

// renderRequest is one request file of bench.py, in chat.py's protocol.
type renderRequest struct {
	Template      string            `json:"template"`
	Request       json.RawMessage   `json:"request"`
	SpecialTokens map[string]string `json:"special_tokens"`
	ContentFormat string            `json:"content_format"`
}

// renderRun is bench.py's output.
type renderRun struct {
	FirstRenderNs int64              `json:"first_render_ns"`
	Python        string             `json:"python"`
	Jinja2        string             `json:"jinja2"`
	Requests      []renderedByPython `json:"requests"`
}

type renderedByPython struct {
	File          string `json:"file"`
	Prompt        string `json:"prompt"`
	ContentFormat string `json:"content_format"`
	Render        Timing `json:"render"`
}

// FindRenderScript looks for tools/refrender/bench.py in dir and its
// parents, so the command works from anywhere inside the repository.
func FindRenderScript(dir string) (string, error) {
	return findAbove(dir, filepath.Join("tools", "refrender", "bench.py"), "--render-script")
}

// findAbove returns the first dir/rel that exists, walking up from dir;
// flag is the option that names the file instead.
func findAbove(dir, rel, flag string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("find %s: %w", rel, err)
	}
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%s not found above the working directory; run from the vrender repository or pass %s", rel, flag)
		}
		dir = parent
	}
}

// pinnedCommand runs name pinned to CPUs 0 to cores-1 with `taskset -c`
// when taskset is available; the boolean reports whether it is.
func pinnedCommand(ctx context.Context, cores int, name string, args ...string) (*exec.Cmd, bool) {
	if taskset, err := exec.LookPath("taskset"); err == nil {
		return exec.CommandContext(ctx, taskset, append([]string{"-c", cpuList(cores), name}, args...)...), true
	}
	return exec.CommandContext(ctx, name, args...), false
}

// cpuList is taskset's list of CPUs 0 to cores-1 ("0" for one core or less).
func cpuList(cores int) string {
	if cores <= 1 {
		return "0"
	}
	return "0-" + strconv.Itoa(cores-1)
}

// run times the reference renderer on the request files, pinned to one
// core. Python renders templates on one thread anyway; the pinning keeps it
// on the same core as the tokenizer half.
// Renders of a request repeat until they add up to minTime.
func (r RenderReference) run(ctx context.Context, files []string, iterations, warmup int, minTime time.Duration) (*renderRun, error) {
	python := r.Python
	if python == "" {
		python = "python3"
	}
	args := append([]string{r.Script, "--iterations", strconv.Itoa(iterations), "--warmup", strconv.Itoa(warmup),
		"--min-time", strconv.FormatFloat(minTime.Seconds(), 'f', -1, 64)}, files...)
	cmd, _ := pinnedCommand(ctx, 1, python, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("reference render benchmark (%s): %w\n%s", cmd, err, stderr.String())
	}
	var out renderRun
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return nil, fmt.Errorf("reference render benchmark output: %w", err)
	}
	if len(out.Requests) != len(files) {
		return nil, fmt.Errorf("reference render benchmark: %d results for %d requests", len(out.Requests), len(files))
	}
	return &out, nil
}
