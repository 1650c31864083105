package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
)

// TestServeHelpSections: serve --help lists every flag exactly once, each in
// its section of serveHelpSections, in that order, with none left over
// under "Other options".
func TestServeHelpSections(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := run(context.Background(), []string{"serve", "--help"}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	help := stdout.String()
	if strings.Contains(help, "\nOther options:\n") {
		t.Errorf("flags outside every section:\n%s", help[strings.Index(help, "\nOther options:\n"):])
	}
	listed := regexp.MustCompile(`(?m)^  --([a-z0-9-]+)`).FindAllStringSubmatch(help, -1)
	count := map[string]int{}
	for _, m := range listed {
		count[m[1]]++
	}
	pos := 0
	for _, sec := range serveHelpSections {
		i := strings.Index(help[pos:], "\n"+sec.title+":\n")
		if i < 0 {
			t.Fatalf("section %q missing or out of order", sec.title)
		}
		pos += i
		for _, name := range sec.flags {
			if count[name] != 1 {
				t.Errorf("--%s (section %q) is listed %d times, want once", name, sec.title, count[name])
			}
		}
	}
	if n := len(listed); n < 60 {
		t.Errorf("only %d flags listed", n)
	}
}

// TestHelpTopic: --help=TOPIC shows the sections whose title, or else the
// options whose name, contains TOPIC; nothing matching is a usage error.
func TestHelpTopic(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		code     int
		want     []string
		dontWant []string
	}{
		{name: "section", args: []string{"serve", "--help=ROUTING"}, code: 0,
			want:     []string{"Usage: vrender serve", "\nRouting among engines:\n", "  --routing POLICY\n", "  --prefix-predict-ttl"},
			dontWant: []string{"\nModel:\n", "--port"}},
		{name: "option", args: []string{"serve", "--help=--max-model"}, code: 0,
			want: []string{`Options matching "max-model":`, "  --max-model-len N\n"}, dontWant: []string{"--max-tools", "\nModel:\n"}},
		{name: "no sections", args: []string{"tokenize", "--help=jsonl"}, code: 0, want: []string{"  --jsonl\n"}},
		{name: "nothing matches", args: []string{"serve", "--help=zzz"}, code: 2,
			want: []string{`no section title or option name contains "zzz" (sections: Model; `}},
		{name: "after --", args: []string{"tokenize", "--", "--help=jsonl"}, code: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			code := run(context.Background(), tc.args, strings.NewReader(""), &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %s", code, tc.code, stderr.String())
			}
			out := stdout.String() + stderr.String()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.dontWant {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
		})
	}
}
