package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vrender/vrender/enginesim"
	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/internal/testmodel"
)

func TestPreflightCommand(t *testing.T) {
	dir := testenv.ModelDir(t, "qwen3")
	m := testmodel.Load(t, "qwen3")
	sim := func(t *testing.T, version string) string {
		s, err := enginesim.New(m, enginesim.Config{ServedModelName: "q"})
		if err != nil {
			t.Fatal(err)
		}
		if version != "" {
			s.SetVersion(version)
		}
		srv := httptest.NewServer(s.Handler())
		t.Cleanup(srv.Close)
		return srv.URL
	}
	common := []string{"preflight", dir, "--served-model-name", "q", "--long-prompts", "1", "--long-prompt-tokens", "500"}
	tests := []struct {
		name    string
		args    func(t *testing.T) []string
		code    int
		stdout  []string
		stderr  string
		jsonOut bool
	}{
		{
			name: "pd pair passes",
			args: func(t *testing.T) []string {
				return append(common, "--prefill-engine", sim(t, ""), "--decode-engine", sim(t, ""))
			},
			code: exitOK,
			stdout: []string{"✓ prefill engine version", "✓ decode engine version", "✓ short request end to end",
				"✓ long prompts: 1 ×", "✓ KV transfer (NIXL metrics): 1 transfers", "all checks passed"},
		},
		{
			name:   "old engine fails with exit 1",
			args:   func(t *testing.T) []string { return append(common, "--engine", sim(t, "0.30.0")) },
			code:   exitError,
			stdout: []string{"✗ engine version", "fix: upgrade the engine to vLLM >= 0.31.0", "FAILED"},
			stderr: "vrender preflight: a check failed",
		},
		{
			name:    "json report",
			args:    func(t *testing.T) []string { return append(common, "--engine", sim(t, "0.31.2"), "--json") },
			code:    exitOK,
			stdout:  []string{`"ok": true`, `"mode": "collocated"`, `"status": "skip"`},
			jsonOut: true,
		},
		{
			name: "engine and pd pair together is a usage error",
			args: func(t *testing.T) []string {
				return append(common, "--engine", "http://a", "--decode-engine", "http://b")
			},
			code:   exitUsage,
			stderr: "do not combine it",
		},
		{
			name:   "no engine",
			args:   func(t *testing.T) []string { return common },
			code:   exitUsage,
			stderr: "give --engine",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args(t), strings.NewReader(""), &stdout, &stderr)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, &stdout, &stderr)
			}
			for _, want := range tt.stdout {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, &stdout)
				}
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, &stderr)
			}
			if tt.jsonOut && !json.Valid(stdout.Bytes()) {
				t.Errorf("stdout is not JSON:\n%s", &stdout)
			}
		})
	}
}
