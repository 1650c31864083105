package main

import (
	"bytes"
	"context"
	"errors"
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
		{"bad flag", []string{"tokenize", "--nope"}, "unknown flag --nope"},
		{"stray argument", []string{"tokenize", "--model", "m", "extra"}, `unexpected argument "extra"`},
		{"no reference", []string{"tokenize", "--model", "m", "--ref-dir", "/nonexistent", "--ref-script", "x.js"}, "reference binding not found"},
		{"render: no model", []string{"render"}, "--model is required"},
		{"render: bad flag", []string{"render", "--model", "m", "--file", "f"}, "unknown flag --file"},
		{"render: stray argument", []string{"render", "--model", "m", "extra"}, `unexpected argument "extra"`},
		{"render: no reference", []string{"render", "--model", "m", "--ref-dir", "/nonexistent", "--ref-script", "x.js", "--render-script", "x.py"},
			"reference binding not found"},
		{"derender: no model", []string{"derender"}, "--model is required"},
		{"derender: bad size", []string{"derender", "--model", "m", "--sizes", "1,x"}, `bad --sizes entry "x"`},
		{"derender: negative family tokens", []string{"derender", "--model", "m", "--family-tokens", "-1"}, "--family-tokens must be 0 or positive"},
		{"images: no model", []string{"images"}, "--model is required"},
		{"images: negative turns", []string{"images", "--model", "m", "--turns", "-1"}, "--turns must be 0 or positive"},
		{"images: zero min time", []string{"images", "--model", "m", "--min-time", "0s"}, "--min-time must be positive"},
		{"send floor: no size", []string{"send-floor-server"}, "--bytes must be at least 2"},
		{"send floor: stray argument", []string{"send-floor-server", "--bytes", "10", "x"}, `unexpected argument "x"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Command-line mistakes are usage errors: exit status 2 and a
			// pointer to the kind's --help.
			var stdout, stderr bytes.Buffer
			err := runBench(context.Background(), tc.args, &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("runBench(%q) = %v, want error containing %q", tc.args, err, tc.wantErr)
			}
			var usage usageError
			if isUsage := errors.As(err, &usage); isUsage != !strings.Contains(tc.wantErr, "reference binding") {
				t.Errorf("runBench(%q) = %v: usage error %v", tc.args, err, isUsage)
			}
		})
	}
}

// TestBenchHelp checks every bench kind answers --help as the other
// commands do: the shared usage/Options layout on stdout, double-dash
// flags, exit status 0.
func TestBenchHelp(t *testing.T) {
	for _, kind := range []string{"tokenize", "render", "derender", "serve", "images"} {
		t.Run(kind, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := run(context.Background(), []string{"bench", kind, "--help"}, strings.NewReader(""), &out, &errOut); code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			help := out.String()
			if !strings.HasPrefix(help, "Usage: vrender bench "+kind+" ") || !strings.Contains(help, "\nOptions:\n  --") ||
				!strings.Contains(help, "  --model ") || !strings.Contains(help, "  -h, --help") {
				t.Errorf("help is not in the commands' layout:\n%s", help)
			}
			if strings.Contains(help, "\n  -model") {
				t.Errorf("single-dash flags in help:\n%s", help)
			}
			var again bytes.Buffer
			if code := run(context.Background(), []string{"help", "bench", kind}, nil, &again, &errOut); code != exitOK || again.String() != help {
				t.Errorf("`vrender help bench %s` (exit %d) differs from --help", kind, code)
			}
		})
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"bench", "derender", "--nope"}, nil, &out, &errOut); code != exitUsage ||
		!strings.Contains(errOut.String(), "Run 'vrender bench derender --help' for usage.") {
		t.Errorf("bad flag: exit %d, stderr %q", code, errOut.String())
	}
}

// TestSendFloorServerHidden checks the send floor's server is the bench's
// own: listed in no usage text.
func TestSendFloorServerHidden(t *testing.T) {
	var out, errOut bytes.Buffer
	run(context.Background(), []string{"bench", "--help"}, nil, &out, &errOut)
	run(context.Background(), []string{"help"}, nil, &out, &errOut)
	run(context.Background(), []string{"bench", "nope"}, nil, &out, &errOut)
	if strings.Contains(out.String()+errOut.String(), "send-floor") {
		t.Errorf("the send floor is listed:\n%s%s", out.String(), errOut.String())
	}
}
