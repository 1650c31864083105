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
