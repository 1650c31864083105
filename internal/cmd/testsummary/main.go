// Command testsummary reads `go test -json` on stdin and prints what plain
// `go test` prints (a line per package, the output of failed tests and
// packages), then what plain `go test` hides without -v: every skipped test
// grouped by its reason (a missing fixture says which and how to get it),
// and a closing "N passed, N failed, N skipped" line. It exits 1 when a test
// or package failed, so `make test` fails on it as on go test itself.
//
//	go test -json ./... | go run ./internal/cmd/testsummary
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
)

func main() {
	os.Exit(run(os.Stdin, os.Stdout))
}

// event is one line of `go test -json` (cmd/test2json's TestEvent).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string // build-output events
}

// key names one test of one package.
type key struct{ pkg, test string }

// summary is what has been read so far.
type summary struct {
	output                  map[key][]string // buffered output per test, and per package (test "")
	passed, failed, skipped int
	failedPkgs              int
	skips                   map[string][]string // reason -> "pkg Test" names
	reasons                 []string            // in first-seen order
}

func run(in io.Reader, out io.Writer) int {
	s := &summary{output: map[key][]string{}, skips: map[string][]string{}}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// Not an event: go test writes build errors and its own
			// complaints as plain text.
			fmt.Fprintf(out, "%s\n", line)
			continue
		}
		s.add(e, out)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(out, "testsummary: reading go test -json: %v\n", err)
		return 1
	}
	s.report(out)
	if s.failed > 0 || s.failedPkgs > 0 {
		return 1
	}
	return 0
}

func (s *summary) add(e event, out io.Writer) {
	k := key{e.Package, e.Test}
	if e.Test == "" && (e.Action == "pass" || e.Action == "skip" || e.Action == "fail") {
		s.packageDone(e.Package, e.Action == "fail", out)
		return
	}
	switch e.Action {
	case "build-output":
		fmt.Fprint(out, e.Output)
	case "output":
		s.output[k] = append(s.output[k], e.Output)
	case "pass":
		s.passed++
		delete(s.output, k)
	case "skip":
		s.skipped++
		reason := skipReason(s.output[k])
		if _, seen := s.skips[reason]; !seen {
			s.reasons = append(s.reasons, reason)
		}
		s.skips[reason] = append(s.skips[reason], e.Package+" "+e.Test)
		delete(s.output, k)
	case "fail":
		// Printed when its package ends, with the package's own output, as
		// go test prints it.
		s.failed++
	}
}

// packageDone prints a package's result: its "ok" or "?" line, or on
// failure the output of its failed tests and its own.
func (s *summary) packageDone(pkg string, failed bool, out io.Writer) {
	own := s.output[key{pkg, ""}]
	delete(s.output, key{pkg, ""})
	var tests []key
	for k := range s.output {
		if k.pkg == pkg {
			tests = append(tests, k)
		}
	}
	slices.SortFunc(tests, func(a, b key) int { return strings.Compare(a.test, b.test) })
	if !failed {
		for _, k := range tests {
			delete(s.output, k)
		}
		for _, line := range own {
			if strings.HasPrefix(line, "ok ") || strings.HasPrefix(line, "?") {
				fmt.Fprint(out, line)
			}
		}
		return
	}
	s.failedPkgs++
	// What is left buffered is the output of failed tests (and of tests a
	// panic or timeout cut short).
	for _, k := range tests {
		fmt.Fprint(out, strings.Join(s.output[k], ""))
		delete(s.output, k)
	}
	fmt.Fprint(out, strings.Join(own, ""))
}

// report prints the skipped tests by reason and the closing line.
func (s *summary) report(out io.Writer) {
	if len(s.reasons) > 0 {
		fmt.Fprintf(out, "\n%d skipped test(s), by reason:\n", s.skipped)
		for _, r := range s.reasons {
			names := s.skips[r]
			shown := names[:min(len(names), 3)]
			more := ""
			if len(names) > len(shown) {
				more = fmt.Sprintf(", and %d more", len(names)-len(shown))
			}
			fmt.Fprintf(out, "  %d x %s\n      (%s%s)\n", len(names), r, strings.Join(shown, ", "), more)
		}
	}
	fmt.Fprintf(out, "\ntests: %d passed, %d failed, %d skipped", s.passed, s.failed, s.skipped)
	if s.failedPkgs > 0 {
		fmt.Fprintf(out, "; %d package(s) FAILED", s.failedPkgs)
	}
	fmt.Fprintln(out)
}

var (
	// fileLine is the "    name_test.go:12: " prefix testing puts before a message.
	fileLine = regexp.MustCompile(`^\s*[\w.-]+\.go:\d+: ?`)
	// frame is internal/testenv's banner decoration.
	frame = regexp.MustCompile(`^\*+\s*`)
)

// skipReason is a skipped test's message on one line: its output without
// go test's own lines, the file:line prefix and testenv's banner frame.
func skipReason(lines []string) string {
	var parts []string
	for _, l := range lines {
		l = strings.TrimRight(l, "\n")
		if strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- SKIP") {
			continue
		}
		l = frame.ReplaceAllString(strings.TrimSpace(fileLine.ReplaceAllString(l, "")), "")
		if l != "" {
			parts = append(parts, l)
		}
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, "; ")
}
