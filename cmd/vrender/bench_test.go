package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestRunBenchArguments(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no kind", nil, "missing kind"},
		{"unknown kind", []string{"detokenize"}, `unknown kind "detokenize"`},
		{"no model", []string{"tokenize"}, "--model is required"},
		{"bad flag", []string{"tokenize", "--nope"}, "flag provided but not defined"},
		{"stray argument", []string{"tokenize", "--model", "m", "extra"}, "unexpected arguments"},
		{"no reference", []string{"tokenize", "--model", "m", "--ref-dir", "/nonexistent", "--ref-script", "x.js"}, "reference binding not found"},
		{"render: no model", []string{"render"}, "bench render: --model is required"},
		{"render: bad flag", []string{"render", "--model", "m", "--file", "f"}, "flag provided but not defined: -file"},
		{"render: stray argument", []string{"render", "--model", "m", "extra"}, "unexpected arguments"},
		{"render: no reference", []string{"render", "--model", "m", "--ref-dir", "/nonexistent", "--ref-script", "x.js", "--render-script", "x.py"},
			"bench render: reference binding not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := runBench(context.Background(), tc.args, &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("runBench(%q) = %v, want error containing %q", tc.args, err, tc.wantErr)
			}
		})
	}
}
