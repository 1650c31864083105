package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/vrender/vrender/bench"
)

// runBenchImages measures image render over HTTP against the Python
// reference.
func runBenchImages(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommand("bench images", "--model DIR [--quick] [--min-time 500ms] [--turns 10] [--python /usr/bin/python3] [--json out.json]",
		"Measure image render (/v1/chat/completions/render with data: URLs) for 1, 4 and 8 images of 640x480, 1280x720 and\n"+
			"1920x1080, JPEG (quality 90, 4:2:0) and PNG, generated at start, on the full path and with return_mm_kwargs false:\n"+
			"the CPU per request of a `vrender serve` child (GOMAXPROCS=1, taskset -c 0) over loopback keep-alive, its syscalls,\n"+
			"allocations and peak RSS, beside the same request in process and the Python reference (Pillow + numpy, one core,\n"+
			"tools/refimage/bench.py) of the same run, and the send floor: the same client against a child answering a static\n"+
			"body of the full-path 1280x720 JPEG answer's size (the image work above it, and reference / floor: the best ratio\n"+
			"any renderer sending that answer over loopback could reach); then a 10-turn conversation re-sending the same two screenshots, and the\n"+
			"scaling of one-1080p-image requests from 1 to 2 server cores. Needs a Qwen2-VL-family model directory.")
	fs := c.fs
	model := fs.String("model", "", "Qwen2-VL-family model `DIR` (preprocessor_config.json, tokenizer, chat template) (required)")
	quick := fs.Bool("quick", false, "a quick run: 1280x720 only, 1 and 4 images, short timings (under a minute)")
	minTime := fs.Duration("min-time", 500*time.Millisecond, "CPU `TIME` each row runs for at least: server CPU over HTTP, in-process CPU, reference CPU per image")
	turns := fs.Int("turns", 10, "turns of the screenshot conversation (0: skip it)")
	python := fs.String("python", "/usr/bin/python3", "python3 `BINARY` with Pillow and numpy (Debian: python3-pil python3-numpy)")
	refScript := fs.String("ref-script", "", "path of tools/refimage/bench.py (default: found above the working directory)")
	bin := fs.String("http-bin", "", "vrender `BINARY` to serve with (default: this one)")
	jsonOut := fs.String("json", "", "also write the report as JSON to this `FILE`")
	if err := parseBench(c, args, model, stdout); err != nil {
		return err
	}
	if *turns < 0 {
		return usagef("--turns must be 0 or positive, got %d", *turns)
	}
	if *minTime <= 0 {
		return usagef("--min-time must be positive, got %s", *minTime)
	}
	script := *refScript
	if script == "" {
		var err error
		if script, err = bench.FindImageScript("."); err != nil {
			return err
		}
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("bench images: %w", err)
	}
	server := *bin
	if server == "" {
		server = self
	}
	opts := bench.ImagesOptions{ModelDir: *model, Sizes: bench.ImageSizes, Formats: bench.ImageFormats, Counts: []int{1, 4, 8},
		MinTime: *minTime, MinUnits: 2, Turns: *turns, ScalingCores: []int{1, 2}, ScalingConns: 8,
		Reference: bench.ImageReference{Python: *python, Script: script},
		Server:    bench.ServerOptions{Bin: server, ModelDir: *model}, SendFloorBin: self}
	if *quick {
		opts.Sizes, opts.Counts, opts.MinUnits, opts.ScalingConns = bench.ImageSizes[1:2], []int{1, 4}, 1, 4
		opts.MinTime = min(opts.MinTime, 150*time.Millisecond)
	}
	report, err := bench.Images(ctx, opts)
	return finishBench(stdout, report, *jsonOut, err)
}
