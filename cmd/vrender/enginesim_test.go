package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/internal/testenv"
)

func TestEngineSimFlags(t *testing.T) {
	dir := testenv.ModelDir(t, "qwen3")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown fault", []string{"--model", dir, "--fault", "boom"}, "unknown fault kind"},
		{"bad rate", []string{"--model", dir, "--fault", "drop", "--fault-rate", "2"}, "outside [0, 1]"},
		{"max_num_seqs", []string{"--model", dir, "--max-num-seqs", "0"}, "at least 1"},
		{"no model", []string{"--port", "0"}, "a model is required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := runEngineSim(context.Background(), tc.args, &out, &errOut)
			var usage usageError
			if !errors.As(err, &usage) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a usage error containing %q", err, tc.want)
			}
		})
	}
}

func TestEngineSimServesUntilCancelled(t *testing.T) {
	dir := testenv.ModelDir(t, "qwen3")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	var out, errOut bytes.Buffer
	if err := runEngineSim(ctx, []string{"--model", dir, "--host", "127.0.0.1", "--port", "0", "--token-latency", "1ms"}, &out, &errOut); err != nil {
		t.Fatalf("engine-sim: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(errOut.String(), "simulated engine serving") {
		t.Fatalf("log: %s", errOut.String())
	}
}
