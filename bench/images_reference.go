package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// ImageReference locates the Python reference of one image's processing
// (Pillow decode and BICUBIC resize, numpy normalize, patchify and bf16:
// tools/refimage/bench.py) and the python3 that has Pillow and numpy.
type ImageReference struct {
	Python string // python3 with Pillow and numpy; "/usr/bin/python3" when empty (Debian's python3-pil)
	Script string // path of tools/refimage/bench.py
}

// FindImageScript looks for tools/refimage/bench.py in dir and its
// parents.
func FindImageScript(dir string) (string, error) {
	return findAbove(dir, filepath.Join("tools", "refimage", "bench.py"), "--ref-script")
}

// imageRefRun is bench.py's output.
type imageRefRun struct {
	Python string           `json:"python"`
	Pillow string           `json:"pillow"`
	Numpy  string           `json:"numpy"`
	Images []imageRefResult `json:"images"`
}

// imageRefResult is the reference's processing of one file.
type imageRefResult struct {
	File      string `json:"file"`
	SizeWH    [2]int `json:"size_wh"`
	ResizedHW [2]int `json:"resized_hw"`
	GridTHW   [3]int `json:"grid_thw"`
	Process   Timing `json:"process"`
	// BF16SHA256 is the sha256 of its bf16 pixel_values: the reference
	// test holds it to the PIL goldens, so the timed work is the real one.
	BF16SHA256 string `json:"bf16_sha256"`
}

// parseImageReference reads bench.py's output for files.
func parseImageReference(data []byte, files []string) (*imageRefRun, error) {
	var out imageRefRun
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("reference image benchmark output: %w", err)
	}
	if len(out.Images) != len(files) {
		return nil, fmt.Errorf("reference image benchmark: %d results for %d files", len(out.Images), len(files))
	}
	for i, im := range out.Images {
		if im.File != files[i] {
			return nil, fmt.Errorf("reference image benchmark: result %d is for %s, want %s", i, im.File, files[i])
		}
		if im.Process.Iterations < 1 || im.Process.MedianNs <= 0 {
			return nil, fmt.Errorf("reference image benchmark: no timed run of %s", im.File)
		}
	}
	return &out, nil
}

// run times the reference on files, pinned to CPU 0 like the server, with
// numpy's thread pools held to one thread: vLLM's media work runs on one
// Python thread.
func (r ImageReference) run(ctx context.Context, preprocessorConfig string, files []string, iterations, warmup int, minTime time.Duration) (*imageRefRun, bool, error) {
	python := r.Python
	if python == "" {
		python = "/usr/bin/python3"
	}
	args := append([]string{r.Script, "--config", preprocessorConfig, "--iterations", strconv.Itoa(iterations),
		"--warmup", strconv.Itoa(warmup), "--min-time", strconv.FormatFloat(minTime.Seconds(), 'f', -1, 64)}, files...)
	cmd, pinned := pinnedCommand(ctx, 1, python, args...)
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1", "MKL_NUM_THREADS=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, pinned, fmt.Errorf("reference image benchmark (%s): %w\n%s", cmd, err, stderr.String())
	}
	out, err := parseImageReference(stdout.Bytes(), files)
	return out, pinned, err
}
