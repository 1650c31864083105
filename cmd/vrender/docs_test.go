package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/parsers"
)

// readme returns the repository's README.md.
func readme(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

var flagName = regexp.MustCompile(`--[a-z][a-z0-9-]*`)

// helpFlags returns the flags `vrender ARGS --help` lists.
func helpFlags(t *testing.T, args ...string) []string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), append(args, "--help"), strings.NewReader(""), &out, &errOut); code != exitOK {
		t.Fatalf("vrender %v --help: exit %d: %s", args, code, errOut.String())
	}
	var flags []string
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "  --") {
			flags = append(flags, strings.Fields(line)[0])
		}
	}
	return uniq(flags)
}

// readmeFlags returns the flags README's command summary names for the
// command whose entry starts with "vrender NAME " (its synopsis and the
// indented lines under it, up to the next command).
func readmeFlags(t *testing.T, doc, name string) []string {
	t.Helper()
	start := strings.Index(doc, "\n## Commands")
	end := strings.Index(doc[start+1:], "\n## ")
	block := doc[start : start+1+end]
	var flags []string
	in := false
	for _, line := range strings.Split(block, "\n") {
		if strings.HasPrefix(line, "vrender ") {
			in = strings.HasPrefix(line, "vrender "+name+" ") || line == "vrender "+name
		}
		if in {
			flags = append(flags, flagName.FindAllString(line, -1)...)
		}
	}
	if flags == nil && !strings.Contains(block, "\nvrender "+name) {
		t.Fatalf("README's command summary has no entry for vrender %s", name)
	}
	return uniq(flags)
}

func uniq(s []string) []string {
	sort.Strings(s)
	return slices.Compact(s)
}

// TestReadmeCommandSummaryMatchesHelp holds README's command summary to the
// binary: no entry names a flag its command does not take, and serve's entry
// (the one operators copy from) lists every flag `serve --help` does. The
// other entries are abridged; README points to `vrender help <command>`.
func TestReadmeCommandSummaryMatchesHelp(t *testing.T) {
	doc := readme(t)
	if !strings.Contains(doc, "`bin/vrender help <command>` gives the full options") {
		t.Error("README's command summary does not point to `vrender help <command>`")
	}
	for _, cmd := range [][]string{
		{"serve"}, {"preflight"}, {"engine-sim"}, {"render"}, {"derender"}, {"parity"},
		{"tokenize"}, {"detokenize"}, {"bench", "tokenize"}, {"bench", "render"}, {"bench", "derender"}, {"bench", "serve"},
		{"bench", "images"},
	} {
		name := strings.Join(cmd, " ")
		t.Run(name, func(t *testing.T) {
			help := helpFlags(t, cmd...)
			doc := readmeFlags(t, doc, name)
			for _, f := range help {
				// MODEL is positional in every synopsis; --model is its other spelling.
				if name == "serve" && f != "--model" && !slices.Contains(doc, f) {
					t.Errorf("%s is in `vrender %s --help` but not in README's command summary", f, name)
				}
			}
			for _, f := range doc {
				if !slices.Contains(help, f) {
					t.Errorf("README's command summary names %s, which `vrender %s` does not take", f, name)
				}
			}
		})
	}
}

// TestReadmeParserLists holds README's parser lists and counts to the
// registry.
func TestReadmeParserLists(t *testing.T) {
	doc := readme(t)
	list := func(label string) []string {
		i := strings.Index(doc, label+": `")
		if i < 0 {
			t.Fatalf("README has no %q parser list", label)
		}
		rest := doc[i+len(label)+2:]
		rest = rest[:strings.Index(rest, ".")]
		var names []string
		for _, m := range regexp.MustCompile("`([a-z0-9_]+)`").FindAllStringSubmatch(rest, -1) {
			names = append(names, m[1])
		}
		return uniq(names)
	}
	if got, want := list("Reasoning"), parsers.ReasoningParsers(); !slices.Equal(got, want) {
		t.Errorf("README's reasoning parsers\n %v\nregistered\n %v", got, want)
	}
	if got, want := list("Tools"), parsers.ToolParsers(); !slices.Equal(got, want) {
		t.Errorf("README's tool parsers\n %v\nregistered\n %v", got, want)
	}
	counts := regexp.MustCompile(`(\d+) reasoning and (\d+) tool parsers`).FindAllStringSubmatch(doc, -1)
	if counts == nil {
		t.Fatal(`README does not say "N reasoning and M tool parsers"`)
	}
	for _, c := range counts {
		if c[1] != strconv.Itoa(len(parsers.ReasoningParsers())) || c[2] != strconv.Itoa(len(parsers.ToolParsers())) {
			t.Errorf("README says %q; registered: %d reasoning, %d tool", c[0], len(parsers.ReasoningParsers()), len(parsers.ToolParsers()))
		}
	}
}

// TestReadmeMakeTargets holds README's make-target table to the Makefile's
// documented targets.
func TestReadmeMakeTargets(t *testing.T) {
	doc := readme(t)
	mk, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^([a-z][a-z-]*):.*## `).FindAllStringSubmatch(string(mk), -1) {
		if !strings.Contains(doc, "| `"+m[1]+"`") {
			t.Errorf("make %s is documented in the Makefile but not in README's make-target table", m[1])
		}
	}
}

// TestReadmePrerequisites: every program .ci/run installs for the tests is
// named in README's prerequisites.
func TestReadmePrerequisites(t *testing.T) {
	doc := readme(t)
	for _, prog := range []string{"Go", "Node.js", "npm", "python3", "Jinja2", "haproxy"} {
		if !strings.Contains(doc, prog) {
			t.Errorf("README's prerequisites do not name %s", prog)
		}
	}
}
