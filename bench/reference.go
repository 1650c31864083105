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
)

// Reference locates the reference tokenizer (the official Hugging Face
// Node binding) and the script that times it, tools/reftok/bench.js.
type Reference struct {
	Node        string // node binary; "node" on PATH when empty
	NodeModules string // folder holding the `tokenizers` package
	Script      string // path of tools/reftok/bench.js
}

// referenceRun is bench.js's output.
type referenceRun struct {
	LoadNs int64           `json:"load_ns"`
	Files  []referenceFile `json:"files"`
}

type referenceFile struct {
	File          string `json:"file"`
	Bytes         int    `json:"bytes"`
	Tokens        int    `json:"tokens"`
	IDs           []int  `json:"ids"`
	DecodedSHA256 string `json:"decoded_sha256"`
	Encode        Timing `json:"encode"`
	Decode        Timing `json:"decode"`
}

// FindScript looks for tools/reftok/bench.js in dir and its parents, so the
// command works from anywhere inside the repository.
func FindScript(dir string) (string, error) {
	return findAbove(dir, filepath.Join("tools", "reftok", "bench.js"), "--ref-script")
}

// run times the reference on files, pinned to one core: `taskset -c 0` when
// available and RAYON_NUM_THREADS=1 so the Rust core does not fan out.
func (r Reference) run(ctx context.Context, tokenizerJSON string, files []string, iterations, warmup int) (*referenceRun, bool, error) {
	node := r.Node
	if node == "" {
		node = "node"
	}
	args := []string{r.Script, "--node-modules", r.NodeModules, "--model", tokenizerJSON,
		"--iterations", strconv.Itoa(iterations), "--warmup", strconv.Itoa(warmup)}
	args = append(args, files...)
	name, pinned := node, false
	if taskset, err := exec.LookPath("taskset"); err == nil {
		name, pinned = taskset, true
		args = append([]string{"-c", "0", node}, args...)
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "RAYON_NUM_THREADS=1", "UV_THREADPOOL_SIZE=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, pinned, fmt.Errorf("reference benchmark (%s): %w\n%s", cmd, err, stderr.String())
	}
	var out referenceRun
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return nil, pinned, fmt.Errorf("reference benchmark output: %w", err)
	}
	if len(out.Files) != len(files) {
		return nil, pinned, fmt.Errorf("reference benchmark: %d results for %d files", len(out.Files), len(files))
	}
	return &out, pinned, nil
}
