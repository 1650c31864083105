package parity

import (
	"fmt"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// Tally counts the outcome of each golden subtest per file. A subtest is
// counted from its own status after it ran, so a skipped case (a missing
// model, an unregistered parser) is a skip, never a pass.
type Tally struct {
	order  []string
	counts map[string]*counts
}

type counts struct{ pass, fail, skip int }

// NewTally returns a tally over the golden files in names.
func NewTally(names []string) *Tally {
	t := &Tally{order: names, counts: map[string]*counts{}}
	for _, n := range names {
		t.counts[n] = &counts{}
	}
	return t
}

// Record counts t's outcome under file; defer it first thing in a subtest.
func (tl *Tally) Record(file string, t testing.TB) {
	c := tl.counts[file]
	switch {
	case t.Failed():
		c.fail++
	case t.Skipped():
		c.skip++
	default:
		c.pass++
	}
}

// Log writes one line per file. It fails t when every case of every file
// was skipped: a run that checked nothing must not read as green.
func (tl *Tally) Log(t testing.TB) {
	t.Helper()
	ran := 0
	for _, n := range tl.order {
		c := tl.counts[n]
		t.Logf("%-45s pass %3d  fail %3d  skipped %3d", n, c.pass, c.fail, c.skip)
		ran += c.pass + c.fail
	}
	if ran == 0 {
		testenv.Missing(t, "every golden case was skipped", "see the skip messages above (`make models`)")
	}
}

// RequireParsers skips (under CI=true: fails) t when a case names a parser
// that is not registered: dropping a registration must not leave CI green.
func RequireParsers(t testing.TB, reasoning, tool string, hasReasoning, hasTool func(string) bool) {
	t.Helper()
	if reasoning != "" && !hasReasoning(reasoning) {
		testenv.Missing(t, fmt.Sprintf("reasoning parser %q is not registered", reasoning), "a golden case needs it")
	}
	if tool != "" && !hasTool(tool) {
		testenv.Missing(t, fmt.Sprintf("tool parser %q is not registered", tool), "a golden case needs it")
	}
}
